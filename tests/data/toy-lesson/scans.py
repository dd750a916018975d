"""The toy scan: squares computed by the build."""

from replaylab.lessons.toy import lab


def scans():
    return {"squares": [{"x": x, lab.KEY: x * x} for x in range(4)]}
