"""Lesson `hunter`: an agent tries to refute a claim about an integrator; the build decides the verdict."""
