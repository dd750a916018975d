"""The validation contract: five checks that a stepper must pass, and the pieces of code it checks."""
