"""The Batch API of the local test server (``/v1/files``, ``/v1/batches``), for tests.

:class:`FakeOpenAI` serves these routes through :func:`handle_get` / :func:`handle_post`.
A batch is processed in a background thread, line by line, with the server's own answer
logic (``FakeOpenAI._completion``: label logprobs, sampled answers, REFUSE / FILTER / EMPTY),
and every answer is counted in ``answered_prompts`` like a live one, so a test sees whether
a prompt was paid for twice across live runs and batches. Scripting (attributes of the
fake): ``batch_delay`` seconds per line (progress to watch), ``batch_fail_marker`` (lines
whose prompt contains it fail with a 500 in the error file), ``batch_expire_after`` (after
that many lines the batch expires: the rest get ``batch_expired``), ``batch_hold`` (an
Event: processing waits for it after ``batch_hold_after`` lines), ``hold_batch_create`` (an
Event: ``POST /v1/batches`` creates the batch, then waits for it before answering).
"""

from __future__ import annotations

import json
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP


def _now() -> int:
    return int(time.time())


def _file_object(f: dict) -> dict:
    return {
        "id": f["id"],
        "object": "file",
        "bytes": len(f["content"]),
        "created_at": f["created_at"],
        "filename": f["filename"],
        "purpose": f["purpose"],
        "status": "processed",
    }


def _multipart(content_type: str, body: bytes) -> dict:
    """Form fields of a multipart body: name -> (filename or None, bytes)."""
    msg = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    out = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        out[name] = (part.get_filename(), part.get_payload(decode=True))
    return out


def handle_post(handler, fake, path: str, raw: bytes) -> bool:
    """Serve a POST to the files / batches routes; False when the path is not one of them."""
    if path == "/v1/files":
        fields = _multipart(handler.headers.get("Content-Type", ""), raw)
        if "file" not in fields:
            handler._error(400, "no file in the upload")
            return True
        with fake._lock:
            fid = f"file-{len(fake.files) + 1}"
            fake.files[fid] = {
                "id": fid,
                "content": fields["file"][1],
                "filename": fields["file"][0] or "upload.jsonl",
                "purpose": (fields.get("purpose") or (None, b"batch"))[1].decode(),
                "created_at": _now(),
            }
        handler._send(200, _file_object(fake.files[fid]))
        return True
    if path == "/v1/batches":
        body = json.loads(raw or b"{}")
        f = fake.files.get(body.get("input_file_id"))
        if f is None:
            handler._error(404, f"No such File object: {body.get('input_file_id')}")
            return True
        with fake._lock:
            bid = f"batch_{len(fake.batches) + 1}"
            batch = {
                "id": bid,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "errors": None,
                "input_file_id": f["id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": _now(),
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
                "metadata": body.get("metadata") or {},
            }
            fake.batches[bid] = batch
        threading.Thread(target=_process, args=(fake, bid), daemon=True).start()
        if fake.hold_batch_create is not None:
            fake.hold_batch_create.wait()
            if fake._stopping:
                handler.close_connection = True
                return True
        handler._send(200, dict(batch))
        return True
    if path.startswith("/v1/batches/") and path.endswith("/cancel"):
        bid = path[len("/v1/batches/") : -len("/cancel")]
        batch = fake.batches.get(bid)
        if batch is None:
            handler._error(404, f"No such Batch object: {bid}")
            return True
        with fake._lock:
            if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
                batch["status"] = "cancelling"
        handler._send(200, dict(batch))
        return True
    return False


def handle_get(handler, fake, path: str) -> bool:
    """Serve a GET to the files / batches routes; False when the path is not one of them."""
    if path.startswith("/v1/files/"):
        rest = path[len("/v1/files/") :]
        fid, _, what = rest.partition("/")
        f = fake.files.get(fid)
        if f is None:
            handler._error(404, f"No such File object: {fid}")
        elif what == "content":
            handler._send_raw(200, f["content"], "application/octet-stream")
        else:
            handler._send(200, _file_object(f))
        return True
    if path.split("?")[0] == "/v1/batches":
        with fake._lock:
            data = [dict(b) for b in reversed(fake.batches.values())]
        handler._send(200, {"object": "list", "data": data, "has_more": False})
        return True
    if path.startswith("/v1/batches/"):
        bid = path[len("/v1/batches/") :]
        batch = fake.batches.get(bid)
        if batch is None:
            handler._error(404, f"No such Batch object: {bid}")
        else:
            with fake._lock:
                copy = json.loads(json.dumps(batch))
            handler._send(200, copy)
        return True
    return False


def _line_error(cid: str, n: int, status: int, message: str) -> dict:
    return {
        "id": f"batch_req_{n}",
        "custom_id": cid,
        "response": {
            "status_code": status,
            "request_id": f"req_{n}",
            "body": {"error": {"message": message, "type": "server_error"}},
        },
        "error": None,
    }


def _process(fake, bid: str) -> None:
    batch = fake.batches[bid]
    text = fake.files[batch["input_file_id"]]["content"].decode("utf-8")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    with fake._lock:
        batch["status"] = "in_progress"
        batch["in_progress_at"] = _now()
        batch["request_counts"]["total"] = len(lines)
    out, errors = [], []
    for n, line in enumerate(lines):
        if fake._stopping:
            return
        if fake.batch_hold is not None and n >= fake.batch_hold_after:
            fake.batch_hold.wait()
        cid, body = line["custom_id"], line["body"]
        expired = fake.batch_expire_after is not None and n >= fake.batch_expire_after
        cancelled = batch["status"] == "cancelling"
        if expired or cancelled:
            code = "batch_expired" if expired else "batch_cancelled"
            errors.append(
                {
                    "id": f"batch_req_{n}",
                    "custom_id": cid,
                    "response": None,
                    "error": {"code": code, "message": f"not executed ({code})"},
                }
            )
            continue
        if fake.batch_delay:
            time.sleep(fake.batch_delay)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if body.get("model") not in fake.models:
            errors.append(
                _line_error(cid, n, 404, f"The model `{body.get('model')}` does not exist")
            )
            failed = True
        elif fake.batch_fail_marker and fake.batch_fail_marker in prompt:
            errors.append(_line_error(cid, n, 500, "scripted batch failure"))
            failed = True
        else:
            resp = fake._completion(body, prompt)
            out.append(
                {
                    "id": f"batch_req_{n}",
                    "custom_id": cid,
                    "response": {"status_code": 200, "request_id": f"req_{n}", "body": resp},
                    "error": None,
                }
            )
            failed = False
        with fake._lock:
            if failed:
                batch["request_counts"]["failed"] += 1
            else:
                batch["request_counts"]["completed"] += 1
                fake.answered_prompts.append(prompt)
                fake.n_batch_answered += 1
    with fake._lock:
        batch["status"] = "finalizing"

    def store(rows) -> str | None:
        if not rows:
            return None
        fid = f"file-{len(fake.files) + 1}"
        content = "".join(json.dumps(r) + "\n" for r in rows).encode()
        fake.files[fid] = {
            "id": fid,
            "content": content,
            "filename": f"{bid}_output.jsonl",
            "purpose": "batch_output",
            "created_at": _now(),
        }
        return fid

    with fake._lock:
        batch["output_file_id"] = store(out)
        batch["error_file_id"] = store(errors)
        if batch["status"] == "cancelling" or any(
            (e.get("error") or {}).get("code") == "batch_cancelled" for e in errors
        ):
            batch["status"] = "cancelled"
        elif fake.batch_expire_after is not None and len(lines) > fake.batch_expire_after:
            batch["status"] = "expired"
        else:
            batch["status"] = "completed"
        batch["completed_at"] = _now()
