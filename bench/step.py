"""Step-protocol figures: what passes cost and how calls are batched into them.

    .venv/bin/python bench/step.py [--rounds 1] [--calls 10]

1. ``--calls`` sequential client calls (``webSearch`` in a loop): the passes, the continuation's
   bytes after each, and each pass's seconds, split into: until the program's first call
   reached the controller (continuation opened, binary found or built, program started and
   connected), the replay of the earlier calls (first call to the new one held), and the tail
   (the new call held to the pass's answer: waiting to end the pass, sealing the continuation).
2. Batching: two client calls from two goroutines at once; one made at once beside one made
   after a goroutine computed for a second; one made at once beside one made after a
   ``time.Sleep`` of a second. How many passes each takes, and its seconds.

Prints figures (compare within one run; the machine is shared); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gocode import Toolbox  # noqa: E402
from gocode.config import parse_config  # noqa: E402
from gocode.run.interceptor import Interceptor, Position, args_hash  # noqa: E402

SEARCH = {
    "name": "web_search",
    "description": "Search the web.",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    "outputSchema": {
        "type": "object",
        "properties": {"hits": {"type": "array", "items": {"type": "string"}}},
        "required": ["hits"],
    },
}

SEQUENTIAL = """
total := ""
for i := 0; i < %d; i++ {
	r, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprintf("query %%d", i)})
	if err != nil {
		return err
	}
	total += r.Hits[0] + ","
}
fmt.Println(total)
"""

# Two goroutines, each making one client call after ``wait`` (the second one only).
PAIR = """
var wg sync.WaitGroup
out := make([]string, 2)
for i := range 2 {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if i == 1 {
			%s
		}
		r, err := webSearch(ctx, WebSearchInput{Query: fmt.Sprint("pair ", i)})
		if err == nil {
			out[i] = r.Hits[0]
		}
	}()
}
wg.Wait()
fmt.Println(out)
"""
BUSY = "for start := time.Now(); time.Since(start) < time.Second; {\n\t\t\t}"
SLEEP = "time.Sleep(time.Second)"


def answer(call: dict[str, Any]) -> dict[str, Any]:
    return {"id": call["id"], "result": {"hits": [call["arguments"]["query"] + " hit"]}}


class Clock:
    """When each pass's calls reached the controller (the interceptor's ``call``, wrapped)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, bool]] = []  # (time, known: answered from the continuation)
        original = Interceptor.call

        async def call(ic: Interceptor, server: str, tool: str, arguments: Any, forward: Any) -> Any:
            digest = args_hash(arguments)
            n = ic._counts.get((server, tool, digest), 0)  # the position the call is about to get
            known = Position(server, tool, digest, n) in ic._known
            self.events.append((time.monotonic(), known))
            return await original(ic, server, tool, arguments, forward)

        Interceptor.call = call  # type: ignore[method-assign]


async def sequential(box: Toolbox, calls: int, clock: Clock) -> dict[str, Any]:
    code = SEQUENTIAL % calls
    cont, results = None, None
    rows: list[dict[str, Any]] = []
    begin = time.monotonic()
    while True:
        clock.events.clear()
        start = time.monotonic()
        got = await box.step(code, [SEARCH], cont, results)
        end = time.monotonic()
        first = clock.events[0][0] if clock.events else end
        new = [t for t, known in clock.events if not known]
        held = new[0] if new else end
        rows.append(
            {
                "seconds": end - start,
                "to_first_call": first - start,
                "replay": held - first,
                "tail": end - held,
                "replayed": sum(known for _, known in clock.events),
                "bytes": len(got.continuation) if got.status == "pending" else 0,
            }
        )
        if got.status != "pending":
            break
        cont, results = got.continuation, [answer(c) for c in got.calls]
    if got.status != "done" or got.run is None or not got.run.ok:
        raise SystemExit(f"the sequential program failed: {json.dumps(got.as_json())[:2000]}")
    return {"passes": got.passes, "total": time.monotonic() - begin, "rows": rows}


async def batch(box: Toolbox, code: str) -> tuple[int, float, list[int]]:
    cont, results, sizes = None, None, []
    start = time.monotonic()
    while True:
        got = await box.step(code, [SEARCH], cont, results)
        if got.status != "pending":
            break
        sizes.append(len(got.calls))
        cont, results = got.continuation, [answer(c) for c in got.calls]
    if got.status != "done":
        raise SystemExit(f"the batching program failed: {json.dumps(got.as_json())[:2000]}")
    return got.passes, time.monotonic() - start, sizes


async def main(rounds: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "gocode.json"
        cfg.write_text(json.dumps({"mcpServers": {}, "defaults": {"codeMode": {"enabled": True, "sandbox": "off"}}}))
        config = parse_config(cfg.read_text(), str(cfg))
        clock = Clock()
        async with Toolbox(config) as box:
            await box.step('fmt.Println("warm")', [SEARCH])  # the module cache and the run path warmed
            print(f"1. {calls} sequential client calls ({rounds} round(s); seconds per pass)")
            totals = []
            for r in range(rounds):
                got = await sequential(box, calls, clock)
                totals.append(got["total"])
                print(f"  round {r + 1}: {got['passes']} passes, {got['total']:.2f} s in all")
                print("    pass  seconds  to-first-call  replay  tail  replayed  continuation-bytes")
                for i, row in enumerate(got["rows"], 1):
                    print(
                        f"    {i:4d}  {row['seconds']:7.2f}  {row['to_first_call']:13.2f}  {row['replay']:6.2f}"
                        f"  {row['tail']:4.2f}  {row['replayed']:8d}  {row['bytes']:18d}"
                    )
            if rounds > 1:
                print(f"  in all: median {statistics.median(totals):.2f} s")
            print("2. batching (passes, seconds, calls per pending pass)")
            for label, code in (
                ("two client calls at once", PAIR % "_ = 0"),
                ("one at once, one after 1 s of computing", PAIR % BUSY),
                ("one at once, one after time.Sleep(1 s)", PAIR % SLEEP),
            ):
                passes, seconds, sizes = await batch(box, code)
                print(f"  {label}: {passes} passes, {seconds:.2f} s, batches {sizes}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    anyio.run(main, args.rounds, args.calls)
