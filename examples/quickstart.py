"""gocode's Python API in a few lines: the tools for a model, and one call dispatched by name.

python examples/quickstart.py gocode.yaml            # e.g. examples/gocode.yaml
"""

import asyncio
import sys

from gocode import Toolbox

CODE = 'city, err := getCity(ctx)\nif err != nil {\n\treturn err\n}\nfmt.Println("You are in", city.City)'


async def main(config: str) -> None:
    async with Toolbox(config, model=None) as tools:
        print([t["name"] for t in tools.definitions("anthropic")])  # or "openai", "gemini", "mcp"
        result = await tools.call("execute_go_code", {"code": CODE})
        print(result.text)  # result.anthropic(id) / result.openai(id) give the reply message


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "gocode.yaml"))
