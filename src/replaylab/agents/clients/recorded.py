"""A client that returns recorded (or authored) messages in order; asking for more is an error."""


class OutOfMessages(RuntimeError):
    """The loop asked for a message the file does not have."""


class RecordedMessagesClient:
    secrets = ()

    def __init__(self, messages, model):
        self.model = model
        self._messages = list(messages)
        self._next = 0

    def complete(self, system, conversation, tools):
        if self._next >= len(self._messages):
            raise OutOfMessages(
                f"the run has {len(self._messages)} messages and the loop asked for message {self._next + 1}"
            )
        message = self._messages[self._next]
        self._next += 1
        return message


def make_client(messages, model):
    return RecordedMessagesClient(messages, model)
