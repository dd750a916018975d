"""The simulations: a tennis ball with quadratic drag, and a harmonic oscillator with four steppers."""
