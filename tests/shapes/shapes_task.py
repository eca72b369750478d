"""Inspect tasks whose solver writes each reply itself (no model call), for the shape corpus.

30 samples x 4 epochs. Sample i's reply in epoch e is its target when (i * 7 + e * 3) % 10 < 1 +
i % 8, else a wrong answer: every sample's pass count is fixed by arithmetic, most split.
``one_scorer`` scores with ``match()``; ``two_scorers`` with ``match()`` and ``includes()``.
make_shapes.py runs them with ``inspect_ai.eval`` on ``mockllm/model``.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import includes, match
from inspect_ai.solver import TaskState, solver

DATASET = [Sample(id=f"s{i:02d}", input=f"What is {i} + 1?", target=str(i + 1))
           for i in range(30)]


def reply(sample_id: str, epoch: int) -> str:
    i = int(sample_id[1:])
    return str(i + 1) if (i * 7 + epoch * 3) % 10 < 1 + i % 8 else "I am not sure"


@solver
def canned():
    async def solve(state: TaskState, generate):
        state.output = ModelOutput.from_content(model="mockllm/model",
                                                content=reply(state.sample_id, state.epoch))
        state.messages.append(state.output.message)
        return state

    return solve


@task
def one_scorer():
    return Task(dataset=DATASET, solver=canned(), scorer=match(), epochs=4)


@task
def two_scorers():
    return Task(dataset=DATASET, solver=canned(), scorer=[match(), includes()], epochs=4)
