"""Lesson `projectile`: an agent runs an experiment to find the best launch angle with drag."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="projectile", package=__name__, title="an agent runs an experiment")
