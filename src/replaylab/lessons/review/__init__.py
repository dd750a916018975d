"""Lesson `review`: three reviewer agents check two steppers; a recomputed failed check stands."""
