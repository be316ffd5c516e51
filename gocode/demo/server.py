"""The bundled demo MCP server: CPE's weather example, ``get_city`` and ``get_weather``.

Both tools declare an ``outputSchema`` and return structured results. The data is fixed
(no network), so the demo and the tests are deterministic. An unknown city is a tool error
(``isError``), which the Go program sees as an ``error``.

Run it over stdio (default) or streamable HTTP::

    python -m gocode.demo.server
    python -m gocode.demo.server --transport http --port 8765
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
from enum import StrEnum
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

# Celsius temperatures for the cities the demo knows.
CITIES: dict[str, float] = {"Paris": 18.5, "Tokyo": 22.0, "New York": 15.0, "Nairobi": 24.5, "Oslo": 4.0}
DEFAULT_CITY = os.environ.get("GOCODE_DEMO_CITY", "Paris")


class Unit(StrEnum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class City(BaseModel):
    city: str = Field(description="Name of the city")


class Weather(BaseModel):
    temperature: float = Field(description="Temperature in the requested unit")
    unit: Unit = Field(description="Unit of the temperature")
    conditions: str = Field(description="Short description of the sky")


server = MCPServer("gocode-demo-weather", instructions="Weather for a few cities (fixed demo data).")


@server.tool()
def get_city() -> City:
    """Get current city location"""
    return City(city=DEFAULT_CITY)


@server.tool()
def get_weather(
    city: Annotated[str, Field(description="The name of the city to get weather for")],
    unit: Annotated[Unit, Field(description="Temperature unit for the weather response")] = Unit.celsius,
) -> Weather:
    """Get current weather data for a location"""
    if city not in CITIES:
        raise ToolError(f"unknown city {city!r}; known cities: {', '.join(sorted(CITIES))}")
    celsius = CITIES[city]
    temp = celsius if unit == Unit.celsius else round(celsius * 9 / 5 + 32, 1)
    return Weather(temperature=temp, unit=unit, conditions="sunny" if celsius > 16 else "cloudy")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gocode.demo.server", description=__doc__.split("\n")[0])
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    # At exit the interpreter's last garbage collection walks every object the MCP SDK created
    # (about a second); frozen ones are skipped, so a client that closed stdin is not kept waiting.
    atexit.register(gc.freeze)
    if args.transport == "stdio":
        server.run("stdio")
    elif args.transport == "http":
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        server.run("sse", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
