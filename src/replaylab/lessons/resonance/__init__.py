"""Lesson `resonance`: an agent finds the driving frequency of largest steady amplitude of a damped
oscillator whose natural frequency and damping it is not told; the build checks it against the
closed form, which no simulation produced."""

from replaylab.lessons import Lesson

LESSON = Lesson(name="resonance", package=__name__, title="a resonance peak found by experiment")
