"""Lesson `rlc`: an agent decides from the capacitor's voltage whether a series RLC circuit whose
resistor and capacitor it is not told is underdamped or overdamped; the build decides it from the
exact damping ratio, which no simulation produced."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="rlc", package=__name__, title="underdamped or overdamped, from the circuit's voltage")
