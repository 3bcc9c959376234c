#!/usr/bin/env python3
"""Drive the reports example's stock valuation as MCP tasks with the official Python MCP
client (PyPI `mcp`, 2026-07-28), through its extension interface (a tasks extension of
a few lines: it claims the `task` result of `tools/call` and resolves it by polling).

Usage: python3 scripts/tasks_client_check.py [path/to/reports-binary]

Starts the example on a fresh SQLite file with 20 000 items per warehouse, then: one
valuation polled to completion (the status messages a host would show, then the result
with its CSV attached), and one cancelled mid-way (`tasks/cancel`, then `cancelled`).
Prints what the client saw and exits non-zero when the server does not behave as
documented.
"""
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Literal

import httpx2
from mcp.client import Client
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict, Field, TypeAdapter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failures, free_port  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/reports"
TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(dict[str, Any])


class TaskParams(RequestParams):
    model_config = ConfigDict(extra="allow")
    task_id: str = Field(alias="taskId")


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class CreatedTask(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class Tasks(ClientExtension):
    """Polls a task to its end; cancels it after `cancel_after` polls when set."""

    identifier = TASKS

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.cancel_after: int | None = None
        self.final: dict[str, Any] | None = None

    def claims(self):
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx) -> CallToolResult:
        polls = 0
        while True:
            params = TaskParams(taskId=created.task_id)
            got = await ctx.session.send_request(GetTask(params=params), ANY)
            if got.get("statusMessage"):
                self.seen.append(got["statusMessage"])
            if got["status"] not in ("working", "input_required"):
                self.final = got
                if got["status"] == "completed":
                    return CallToolResult.model_validate(got["result"])
                return CallToolResult(content=[], is_error=True)
            polls += 1
            if self.cancel_after is not None and polls == self.cancel_after:
                ack = await ctx.session.send_request(CancelTask(params=params), ANY)
                check(ack.get("resultType") == "complete", f"tasks/cancel acknowledged: {ack}")
            await asyncio.sleep((created.poll_interval_ms or 500) / 1000 / 5)


async def valuation(url: str, token: str, tasks: Tasks) -> CallToolResult:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28",
                          extensions=[tasks]) as client:
            return await client.call_tool("reports_stock_valuation", {"warehouse_code": None})


def main() -> int:
    work = tempfile.mkdtemp()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    token_file = os.path.join(work, "token")
    server = subprocess.Popen(
        [BIN, "--db", f"sqlite://{work}/reports.db", "--addr", f"127.0.0.1:{port}",
         "--items", "20000", "--token-out", token_file],
        stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if os.path.exists(token_file) and os.path.getsize(token_file) > 0:
                break
            time.sleep(0.1)
        token = open(token_file).read().strip()
        time.sleep(0.5)

        polled = Tasks()
        result = asyncio.run(valuation(url, token, polled))
        print(f"completed after {len(polled.seen)} status messages, e.g. {polled.seen[:1]} ... "
              f"{polled.seen[-1:]}")
        check(polled.final is not None and polled.final["status"] == "completed",
              "the polled task completed")
        check(any(m.startswith("valuing SBY-WH") for m in polled.seen),
              "the host saw the valuation's progress")
        text = result.content[0].text
        print(f"the model reads: {text}")
        check(text.startswith("Stock valuation of branch SBY-01: 3 warehouse(s), 60000 item lines"),
              "the summary for the model")
        csv = result.content[1].resource
        check(csv.mime_type == "text/csv" and csv.text.splitlines()[0] == "warehouse,lines,value"
              and len(csv.text.splitlines()) == 4,
              "the per-warehouse CSV is attached (60 000 item lines are over the bound)")

        cancelled = Tasks()
        cancelled.cancel_after = 2
        asyncio.run(valuation(url, token, cancelled))
        check(cancelled.final is not None and cancelled.final["status"] == "cancelled",
              f"the cancelled task ends cancelled: {cancelled.final and cancelled.final['status']}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("the Python client drove one task to completion and cancelled another")
    return 0


if __name__ == "__main__":
    sys.exit(main())
