"""The blocking API, for scripts without an event loop.

python examples/sync_script.py examples/gocode.yaml
"""

import sys

from gocode import SyncToolbox

with SyncToolbox(sys.argv[1] if len(sys.argv) > 1 else "gocode.yaml") as tools:
    result = tools.call(
        "execute_go_code",
        {
            "code": 'w, err := getWeather(ctx, GetWeatherInput{City: "Oslo"})\nif err != nil {\n\treturn err\n}\nfmt.Printf("Oslo: %.1f°C, %s\\n", w.Temperature, w.Conditions)'
        },
    )
    print(result.text if not result.is_error else f"failed: {result.text}")
