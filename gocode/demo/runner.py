"""The demo's example: the weather program run through ``execute_go_code`` against the demo server."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from gocode.config import Config, parse_config
from gocode.run.runner import RunResult
from gocode.toolbox import Toolbox

DEMO_CODE = """\
city, err := getCity(ctx)
if err != nil {
	return err
}
weather, err := getWeather(ctx, GetWeatherInput{City: city.City, Unit: "fahrenheit"})
if err != nil {
	return err
}
fmt.Println("City:", city.City)
fmt.Printf("Weather: %.1f°F, %s\\n", weather.Temperature, weather.Conditions)
"""


def demo_config() -> Config:
    """A config with nothing but the bundled demo server, started with this Python."""
    server = {"command": sys.executable, "args": ["-m", "gocode.demo.server"]}
    return parse_config(json.dumps({"mcpServers": {"weather": server}}), "<demo>.json")


async def run_demo(
    sandbox: str = "auto", progress: Callable[[str], None] | None = None
) -> tuple[RunResult, str, dict[str, float]]:
    """Run the example; returns its result, the declarations the model saw, and the times of
    discovery, the set-up (the Go module cache and the sandbox launcher, once per machine) and the call."""
    config = demo_config()
    if sandbox != config.defaults.code_mode.sandbox:
        code_mode = config.defaults.code_mode.model_copy(update={"sandbox": sandbox})
        config = config.model_copy(update={"defaults": config.defaults.model_copy(update={"code_mode": code_mode})})
    start = time.monotonic()
    async with Toolbox(config, prewarm=False, progress=progress) as box:
        discovered = time.monotonic()
        # The module cache and the sandbox launcher are set up once per machine: timed apart from
        # the call they would delay.
        await box.set_up()
        ready = time.monotonic()
        result = await box.execute(DEMO_CODE)
        times = {
            "discoveryMs": round(1000 * (discovered - start), 1),
            "setupMs": round(1000 * (ready - discovered), 1),
            "callMs": round(1000 * (time.monotonic() - ready), 1),
        }
        return result, box.code_mode.declarations(), times
