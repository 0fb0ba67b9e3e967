"""`ScriptedModel.play`: one server, case after case, each as a new server would serve it
(the shared agents of tests/kit/shared_agents.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from gemwire.testing import Reply, Scenario, ScriptedModel, Text

STREAM = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"


def turn(model: ScriptedModel, key: str = "k") -> int:
    request = urllib.request.Request(
        model.url + STREAM,
        data=json.dumps({"contents": []}).encode(),
        headers={"x-goog-api-key": key, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_play_serves_the_next_scenario_from_its_first_turn_at_the_same_address() -> None:
    with ScriptedModel(Scenario(turns=[Reply([Text("one")])])) as model:
        url = model.url
        assert (turn(model), turn(model)) == (200, 400)  # the second has no turn left
        assert len(model.problems) == 1
        model.play(Scenario(turns=[Reply([Text("a")]), Reply([Text("b")])], api_key="new"))
        assert (model.requests, model.problems, model.streaming_requests) == ([], [], 0)
        assert (model.turns_served, model.turns_left) == (0, 2)
        assert turn(model, key="k") == 400  # the new scenario's key is asked for
        assert (turn(model, key="new"), turn(model, key="new")) == (200, 200)
        assert [r.turn for r in model.requests] == [None, 0, 1]
        assert model.url == url
    assert model.problems == []
