"""A hand-written stdio MCP server whose tools run as tasks (2025-11-25), well and badly.

No SDK (the Python SDK serves no tasks): it answers ``tools/call`` with a ``task`` field with a
``CreateTaskResult`` and runs the work in a thread; ``tasks/get``, ``tasks/result`` (held until
the task has ended), ``tasks/cancel`` and ``tasks/list`` answer as the spec says. Tools:

    research  (required) ``steps`` steps of 0.1 s, each a status message and a progress
              notification for the call's token when it has one; answers ``done <topic>``
    forever   (required) never ends by itself
    garbage   (required) answers with a task whose status is ``exploded``
    wrongid   (required) tasks/get answers about another task
    broken    (required) tasks/result answers a JSON-RPC error
    huge      (required) answers ``size`` bytes of text
    either    (optional) the same as research, with or without a task

A task-only tool called without a task is refused (-32601), as server-everything does.
``--log PATH`` appends one JSON line per task request received (method and task id).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from typing import Any

TOOLS = [
    ("research", "required"),
    ("forever", "required"),
    ("garbage", "required"),
    ("wrongid", "required"),
    ("broken", "required"),
    ("huge", "required"),
    ("either", "optional"),
]
SCHEMA = {
    "type": "object",
    "properties": {"topic": {"type": "string"}, "steps": {"type": "integer"}, "size": {"type": "integer"}},
}


class Server:
    def __init__(self, log: str | None) -> None:
        self.log = log
        self.write_lock = threading.Lock()
        self.changed = threading.Condition()
        self.tasks: dict[str, dict[str, Any]] = {}
        self.ids = itertools.count(1)

    def send(self, msg: dict[str, Any]) -> None:
        with self.write_lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def record(self, method: str, task_id: str) -> None:
        if self.log:
            with open(self.log, "a") as f:
                f.write(json.dumps({"method": method, "taskId": task_id}) + "\n")

    def task_json(self, task: dict[str, Any]) -> dict[str, Any]:
        out = {k: task[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval")}
        if task.get("statusMessage"):
            out["statusMessage"] = task["statusMessage"]
        return out

    def update(self, task: dict[str, Any], status: str, message: str = "", result: Any = None) -> bool:
        with self.changed:
            if task["status"] in ("completed", "failed", "cancelled"):
                return False
            task.update(status=status, statusMessage=message, lastUpdatedAt=now())
            if result is not None:
                task["result"] = result
            self.changed.notify_all()
        if "taskId" not in task:
            return True  # a plain call: no task to tell about
        self.send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": self.task_json(task)})
        return True

    def work(self, task: dict[str, Any], tool: str, args: dict[str, Any], token: Any) -> None:
        if tool == "forever" or tool == "wrongid":
            return
        if tool == "huge":
            text = "x" * int(args.get("size", 1000))
            self.update(task, "completed", "", {"content": [{"type": "text", "text": text}]})
            return
        steps = int(args.get("steps", 3))
        for i in range(steps):
            if token is not None:  # before the status, which a client may poll first
                params = {"progressToken": token, "progress": i + 1, "total": steps, "message": f"step {i + 1}"}
                self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
            if not self.update(task, "working", f"step {i + 1} of {steps}"):
                return  # cancelled
            time.sleep(0.1)
        text = f"done {args.get('topic', '')}"
        self.update(task, "completed", "", {"content": [{"type": "text", "text": text}]})

    def call(self, rid: Any, params: dict[str, Any]) -> None:
        tool, args = params.get("name"), params.get("arguments") or {}
        support = dict(TOOLS).get(tool)
        token = (params.get("_meta") or {}).get("progressToken")
        if "task" not in params:
            if support == "required":
                return self.error(rid, -32601, f"Tool {tool} requires task augmentation (taskSupport: 'required')")
            task = {"status": "working"}
            self.work(task, str(tool), args, token)
            return self.send({"jsonrpc": "2.0", "id": rid, "result": task.get("result")})
        task_id = f"task-{next(self.ids)}"
        stamp = now()
        status = "exploded" if tool == "garbage" else "working"
        task = {"taskId": task_id, "status": status, "createdAt": stamp, "lastUpdatedAt": stamp}
        task.update(ttl=60000, pollInterval=100, tool=tool)
        self.tasks[task_id] = task
        self.record("tools/call", task_id)
        self.send({"jsonrpc": "2.0", "id": rid, "result": {"task": self.task_json(task)}})
        threading.Thread(target=self.work, args=(task, tool, args, token), daemon=True).start()

    def error(self, rid: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def on_task(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        task_id = str(params.get("taskId"))
        self.record(method, task_id)
        task = self.tasks.get(task_id)
        if task is None:
            return self.error(rid, -32602, f"Task not found: {task_id}")
        if method == "tasks/get":
            answer = self.task_json(task)
            if task["tool"] == "wrongid":
                answer["taskId"] = "task-somebody-else"
            return self.send({"jsonrpc": "2.0", "id": rid, "result": answer})
        if method == "tasks/cancel":
            if not self.update(task, "cancelled", "cancelled by the client"):
                return self.error(rid, -32602, f"Cannot cancel task in terminal status: {task['status']}")
            return self.send({"jsonrpc": "2.0", "id": rid, "result": self.task_json(task)})
        # tasks/result: held until the task has ended
        with self.changed:
            while task["status"] not in ("completed", "failed", "cancelled"):
                self.changed.wait()
        if task["tool"] == "broken" or "result" not in task:
            return self.error(rid, -32603, f"the task {task_id} has no result: it broke")
        result = dict(task["result"], _meta={"io.modelcontextprotocol/related-task": {"taskId": task_id}})
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def handle(self, msg: dict[str, Any]) -> None:
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            caps = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": caps,
                "serverInfo": {"name": "tasks", "version": "1"},
            }
            self.send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/list":
            tools = [
                {"name": n, "description": f"The {n} task.", "inputSchema": SCHEMA, "execution": {"taskSupport": s}}
                for n, s in TOOLS
            ]
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif method == "tools/call":
            threading.Thread(target=self.call, args=(rid, params), daemon=True).start()
        elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
            threading.Thread(target=self.on_task, args=(rid, method, params), daemon=True).start()
        elif method == "tasks/list":
            tasks = [self.task_json(t) for t in self.tasks.values()]
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"tasks": tasks}})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif rid is not None:
            self.error(rid, -32601, f"Method not found: {method}")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    server = Server(parser.parse_args().log)
    for line in sys.stdin:
        if line.strip():
            server.handle(json.loads(line))


if __name__ == "__main__":
    main()
