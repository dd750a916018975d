"""Lesson `toy`: the smallest lesson the contract allows, added by a test to a copy of the project."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="toy", package=__name__, title="the square of a number")
