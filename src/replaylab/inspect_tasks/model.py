"""`--model replaylab/<program>`: replaylab's scripted baselines as an Inspect model, so that a
lesson runs under Inspect with no key and no network (`inspect eval replaylab/<lesson> --model
replaylab/scripted-careful`). A program, not a language model: its runs are labelled scripted.

The program is found from the sample's system text and task, and reads the conversation so far,
as replaylab's `scripted` provider runs it; epoch N plays seed N-1, as a scripted campaign's run
of index N does."""

from inspect_ai._util.error import PrerequisiteError  # Inspect's one-line error (pinned version)
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolCall

from replaylab.agents.clients import Options
from replaylab.agents.clients.scripted import PROGRAMS, make_client
from replaylab.agents.messages import conversation_for
from replaylab.inspect_tasks.convert import steps_of
from replaylab.lessons import registry


def _variants():
    """{(system, task): (lesson, variant, instance)} of every variant of every instance of every family."""
    return {(v.system, v.task): (lesson, name, instance) for lesson in registry.lessons() for instance in lesson.instances
            for name, v in lesson.instance_variants(instance).items()}


def _epoch():
    from inspect_ai.solver._task_state import sample_state  # private in the pinned version: the sample's epoch

    state = sample_state()
    return state.epoch if state is not None else 1


@modelapi(name="replaylab")
class ScriptedBaselines(ModelAPI):
    def __init__(self, model_name, base_url=None, api_key=None, config=None, **model_args):
        if model_name not in PROGRAMS:
            raise PrerequisiteError(f"--model replaylab/{model_name}: not a program of replaylab (its programs: "
                                    f"{', '.join('replaylab/' + p for p in PROGRAMS)})")
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.variants = _variants()

    async def generate(self, input, tools, tool_choice, config):
        system, task, steps = steps_of(input, "the model's input")
        found = self.variants.get((system, task))
        if found is None:
            raise PrerequisiteError(f"--model replaylab/{self.model_name}: plays replaylab's tasks only (replaylab/LESSON)")
        lesson, variant, instance = found
        client = make_client(Options(lesson.name, variant, model=self.model_name, seed=_epoch() - 1, agent=lesson.part("agent"),
                                     instance=lesson.instance(instance)))
        message = client.complete(system, conversation_for(task, steps), tools)
        calls = [ToolCall(id=c.id, function=c.name, arguments=c.arguments) for c in message.tool_calls]
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=message.text, model=self.model_name, source="generate", tool_calls=calls or None),
            stop_reason="tool_calls" if calls else "stop")])
