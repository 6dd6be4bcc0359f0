"""DSSE envelopes (Dead Simple Signing Envelope, v1): what is signed and how it is carried.

The signature is over the pre-authentication encoding of the payload type and the payload
bytes, never over JSON that a parser could read two ways.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from ..errors import AgentError
from ..receipts.signing import Signer
from .signers import key_id

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
MAX_ENVELOPE_BYTES = 32 * 1024 * 1024


def pae(payload_type: str, payload: bytes) -> bytes:
    """`"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths in ASCII decimal bytes."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "payloadType": self.payload_type,
                "payload": base64.b64encode(self.payload).decode("ascii"),
                "signatures": [
                    {"keyid": item.keyid, "sig": base64.b64encode(item.sig).decode("ascii")}
                    for item in self.signatures
                ],
            },
            indent=2,
        )


def sign_envelope(
    payload: bytes, signer: Signer, payload_type: str = IN_TOTO_PAYLOAD_TYPE
) -> Envelope:
    signature = base64.b64decode(signer.sign_bytes(pae(payload_type, payload)))
    return Envelope(payload_type, payload, (Signature(key_id(signer.public_key), signature),))


def parse_envelope(data: bytes) -> Envelope:
    """An envelope read from a note or a file; any deviation from the form is one sentence."""
    if len(data) > MAX_ENVELOPE_BYTES:
        raise AgentError(f"the envelope is over {MAX_ENVELOPE_BYTES} bytes")
    try:
        value: Any = json.loads(data)
    except (ValueError, RecursionError):
        raise AgentError("the envelope is not valid JSON") from None
    if not isinstance(value, dict):
        raise AgentError("the envelope is not a JSON object")
    payload_type, payload, signatures = (
        value.get("payloadType"),
        value.get("payload"),
        value.get("signatures"),
    )
    if not isinstance(payload_type, str) or not isinstance(payload, str):
        raise AgentError("the envelope has no payloadType or payload")
    if not isinstance(signatures, list) or not signatures:
        raise AgentError("the envelope carries no signatures")
    parsed: list[Signature] = []
    for item in signatures:
        if not isinstance(item, dict) or not isinstance(item.get("sig"), str):
            raise AgentError("an envelope signature is malformed")
        keyid = item.get("keyid", "")
        parsed.append(Signature(keyid if isinstance(keyid, str) else "", _base64(item["sig"])))
    return Envelope(payload_type, _base64(payload), tuple(parsed))


def _base64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise AgentError("the envelope holds text that is not base64") from None
