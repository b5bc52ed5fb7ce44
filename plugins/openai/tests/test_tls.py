"""aiohttp's default TLS contexts, imported through bench_openai.tls: CA certificates loaded on first use, same settings."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, ssl
import bench_openai.client; bench_openai.client._aiohttp()  # what a run on aiohttp imports
import aiohttp.connector as connector
from bench_openai.tls import DeferredCAContext

verified, unverified = connector._SSL_CONTEXT_VERIFIED, connector._SSL_CONTEXT_UNVERIFIED
report = {"types": [type(verified).__name__, type(unverified).__name__],
          "loaded_at_import": [verified.loaded(), unverified.loaded()],
          "plain_after_import": type(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)).__name__,
          "default_after_import": type(ssl.create_default_context()).__name__}
reference = ssl.create_default_context()
report["same_settings"] = [verified.verify_mode == reference.verify_mode, verified.check_hostname == reference.check_hostname,
                           verified.options == reference.options, verified.verify_flags == reference.verify_flags,
                           unverified.verify_mode == ssl.CERT_NONE, unverified.check_hostname is False]
verified.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.org")  # what a connection does first
report["loaded_after_wrap"] = verified.loaded()
report["same_certificates"] = verified.cert_store_stats() == reference.cert_store_stats()
report["unverified_certificates"] = unverified.cert_store_stats() == reference.cert_store_stats()
print(json.dumps(report))
"""


def test_default_contexts_load_their_certificates_on_first_use_with_aiohttps_settings() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout)
    assert report["types"] == ["DeferredCAContext", "DeferredCAContext"]
    assert report["loaded_at_import"] == [False, False]
    assert report["plain_after_import"] == "SSLContext" and report["default_after_import"] == "SSLContext"
    assert all(report["same_settings"])
    assert report["loaded_after_wrap"] is True
    assert report["same_certificates"] and report["unverified_certificates"]
