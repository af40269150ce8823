"""The ``serve`` fixture: stub OpenAI-compatible servers on 127.0.0.1 (``stub_server.Stub``),
each stopped when its test ends."""

from __future__ import annotations

import pytest

from tests.answers.stub_server import Stub


@pytest.fixture
def serve():
    made = []

    def start(reply):
        made.append(Stub(reply))
        return made[-1]

    yield start
    for s in made:
        s.close()
