"""The validation contract: five checks that a stepper must pass, and the pieces under review."""
