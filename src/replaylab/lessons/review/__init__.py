"""Lesson `review`: three reviewer agents check two steppers; a recomputed failed check stands."""

from replaylab.lessons import Lesson

# Each reviewer is a run of its own (a variant); one verdict per group of reviewers' runs.
LESSON = Lesson(
    name="review",
    package=__name__,
    title="three reviewers for one piece of code",
    judged="group",
    unit=("review group", "review groups"),
)
