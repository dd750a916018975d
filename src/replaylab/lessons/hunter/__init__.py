"""Lesson `hunter`: an agent tries to refute a claim about an integrator; the build decides the verdict."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="hunter", package=__name__, title="a counterexample hunter")
