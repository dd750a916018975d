"""The build's answer of each review instance: the checks each piece fails when the build runs them."""

from replaylab.lessons.review import scans


def answers(instances):
    failures = scans.failures()
    return {instance.id: {"failures": failures} for instance in instances}
