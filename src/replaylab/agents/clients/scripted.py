"""A deterministic program that plays the agent: it reads the results so far and writes the next message."""


class ScriptedClient:
    secrets = ()

    def __init__(self, program, model):
        """`program(conversation) -> ModelMessage`; `model` names the program."""
        self.model = model
        self._program = program

    def complete(self, system, conversation, tools):
        return self._program(conversation)


def make_client(program, model):
    return ScriptedClient(program, model)
