"""Lesson `review`: three reviewer agents check two steppers; a recomputed failed check stands."""

from replaylab.lessons import Lesson

# Each reviewer is a run of its own (a variant), scored on its own answer; the runs of one group
# (and one model) are also decided together, piece by piece.
LESSON = Lesson(
    name="review",
    package=__name__,
    title="three reviewers for one piece of code",
    judged="group",
    unit=("reviewer's run", "reviewers' runs"),
)
