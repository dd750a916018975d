"""The build's answer of each pendulum instance: the exact crossing, from the arithmetic-geometric mean."""

from replaylab.lessons.pendulum import scans


def answers(instances):
    exact = scans.exact_scan()
    return {instance.id: exact for instance in instances}
