"""Lesson `pendulum`: an agent finds where the small-angle period fails by 1 %; the build checks it
against the exact period, which no simulation produced."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="pendulum", package=__name__, title="a simulation checked against an exact formula")
