"""The toy's figures: the scorecard only."""

from replaylab.lessons.plotting import scorecard_figure

FIGURES = {"scorecard": scorecard_figure}
