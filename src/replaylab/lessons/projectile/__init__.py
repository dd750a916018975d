"""Lesson `projectile`: an agent runs an experiment to find the best launch angle with drag."""
