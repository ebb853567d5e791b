#!/usr/bin/env python3
"""A short session with the Base Context daemon from Python, printing what happens.

    python3 scenario.py

Starts ``base-context serve`` (or ``$BASE_CONTEXT_COMMAND``), creates a session, appends a user
message, an assistant tool call, its result and the answer, builds the context in OpenAI chat
format, shows an error reply, imports the sample pi session, compacts it (offline, with the
built-in summarizer, unless a model is configured) and shuts down. Sessions are stored in
``$BASE_CONTEXT_HOME`` (default ~/.base-context): point it at a scratch folder to try this out.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from base_context_client import BaseContextClient, BaseContextError

SAMPLE = Path(__file__).resolve().parents[2] / "sessions" / "refactor-auth.jsonl"


def short(text: str, width: int = 70) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def now_ms() -> int:
    return int(time.time() * 1000)


def main() -> int:
    project = os.getcwd()
    with BaseContextClient() as client:
        info = client.initialize(project_dir=project, client_name="python-scenario")
        server = info["serverInfo"]
        print(f"Connected to {server['name']} {server['version']} (protocol {info['protocolVersion']})")

        # Notifications arrive on the reader thread; print them as they come.
        client.on_notification("compaction/didStart", lambda p: print(f"  … compaction started ({p['reason']})"))
        client.on_notification("compaction/didEnd", lambda p: print(f"  … compaction ended: {p['status']}"))

        session = client.request("session/create", {"cwd": project, "name": "Python scenario"})["session"]
        session_id = session["id"]
        print(f"Created session {session_id}")

        entries = [
            {"role": "user", "content": "Why does the login accept an empty password? (naïve check — ✓ UTF-8)", "timestamp": now_ms()},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me read the handler."},
                    {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "src/auth/login.ts"}},
                ],
                "stopReason": "toolUse",
                "timestamp": now_ms(),
            },
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "if (!user || (password && !(await verify(user.hash, password)))) {"}],
                "isError": False,
                "timestamp": now_ms(),
            },
            {"role": "assistant", "content": [{"type": "text", "text": "`password && …` skips the check for an empty password."}], "stopReason": "stop", "timestamp": now_ms()},
        ]
        for message in entries:
            appended = client.request("entry/append", {"sessionId": session_id, "entry": {"type": "message", "message": message}})
            print(f"Appended {message['role']:<10} entry {appended['entry']['id']} ({appended['tokens']} tokens)")

        context = client.request("context/build", {"sessionId": session_id, "format": "openai-chat"})
        print(f"Context in OpenAI chat format: {len(context['messages'])} messages, {context['tokens']} tokens")
        for message in context["messages"]:
            text = message.get("content") or ""
            calls = ", ".join(f"{call['function']['name']}({call['function']['arguments']})" for call in message.get("tool_calls", []))
            print(f"  {message['role']:<9} {short(text + (' → ' + calls if calls else ''))}")

        try:
            client.request("session/get", {"sessionId": "no-such-session"})
        except BaseContextError as error:
            print(f"Error as expected: code {error.code}, data.code {error.data_code}: {error.message}")

        imported = client.request("session/import", {"format": "pi-jsonl", "path": str(SAMPLE)})
        sample = imported["session"]
        skipped = len(imported.get("skippedLines") or [])
        print(f"Imported {SAMPLE.name}: session {sample['id']}, {imported['entryCount']} entries, {skipped} lines skipped")

        usage = client.request("context/usage", {"sessionId": sample["id"], "contextWindow": 32000})
        print(f"Context usage: {usage['tokens']} tokens of 32000, compact now: {usage['shouldCompact']}")

        result = client.request("compaction/run", {"sessionId": sample["id"], "reason": "manual"})
        client.wait_for_notification("compaction/didEnd")
        after = client.request("context/build", {"sessionId": sample["id"]})
        print(f"Compaction {result['status']} by {result.get('summarizer', '?')}: context now {after['tokens']} tokens")

        exit_code = client.shutdown()
        print(f"Shut down: the daemon exited with code {exit_code}")
    return 0 if exit_code == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BaseContextError as error:
        print(f"scenario.py: {error.message}", file=sys.stderr)
        sys.exit(1)
