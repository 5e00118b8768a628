"""Drives the dashboard's image form in headless Chromium over the DevTools
protocol (src/serve/dashboard_form_slowtest.cc): opens the page, puts an
image in the form's file input, submits it as a person would, and prints
the status line, the rows of the answer and the note.

Usage: dashboard_form.py DEVTOOLS_PORT PAGE_URL IMAGE

The standard library only: the DevTools protocol is JSON over a WebSocket,
and the few frames needed here are written by hand (RFC 6455: a client
masks what it sends; the browser's frames are unmasked).
"""

import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request

TIMEOUT_S = 30


def main():
    port, page_url, image = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    req = urllib.request.Request(
        "http://127.0.0.1:%d/json/new?%s" % (port, page_url), method="PUT")
    target = json.load(urllib.request.urlopen(req, timeout=TIMEOUT_S))
    host, path = target["webSocketDebuggerUrl"][len("ws://"):].split("/", 1)
    h, p = host.split(":")
    sock = socket.create_connection((h, int(p)), timeout=TIMEOUT_S)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n" % (path, host, key)).encode())
    buf = bytearray()
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            sys.exit("DevTools closed the connection during the handshake")
        buf += chunk
    if not buf.startswith(b"HTTP/1.1 101"):
        sys.exit("DevTools refused the WebSocket: " + buf.decode(errors="replace"))
    buf = buf.split(b"\r\n\r\n", 1)[1]

    def send(obj):
        data = json.dumps(obj).encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = bytes([0x81, 0x80 | n])
        elif n < 65536:
            head = bytes([0x81, 0x80 | 126]) + struct.pack(">H", n)
        else:
            head = bytes([0x81, 0x80 | 127]) + struct.pack(">Q", n)
        sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def take(n):
        nonlocal buf
        while len(buf) < n:
            chunk = sock.recv(65536)
            if not chunk:
                sys.exit("DevTools closed the connection")
            buf += chunk
        out, buf = bytes(buf[:n]), buf[n:]
        return out

    def receive():
        _, b1 = take(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", take(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", take(8))[0]
        return json.loads(take(n))

    png = base64.b64encode(open(image, "rb").read()).decode()
    script = """(async () => {
      for (let i = 0; i < 100 && !document.getElementById('classify-form'); ++i)
        await new Promise(r => setTimeout(r, 100));
      const bytes = Uint8Array.from(atob('%s'), c => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'image.png', {type: 'image/png'}));
      document.getElementById('classify-file').files = dt.files;
      document.getElementById('classify-form').requestSubmit();
      const status = document.getElementById('classify-status');
      for (let i = 0; i < 200; ++i) {
        await new Promise(r => setTimeout(r, 100));
        if (status.textContent.startsWith('answered') || status.className === 'error') break;
      }
      const rows = [...document.querySelectorAll('#classify-result tbody tr')]
          .map(r => [...r.children].map(td => td.textContent).join(','));
      return JSON.stringify({status: status.textContent, rows: rows,
          note: document.getElementById('classify-note').textContent});
    })()""" % png
    deadline = time.time() + TIMEOUT_S
    ids = iter(range(1, 1 << 30))

    def evaluate(expression):
        i = next(ids)
        send({"id": i, "method": "Runtime.evaluate",
              "params": {"expression": expression, "awaitPromise": True,
                         "returnByValue": True}})
        while time.time() < deadline:
            m = receive()
            if m.get("id") == i:
                return m
        sys.exit("no answer from the page within %d s" % TIMEOUT_S)

    # The tab opens on the URL but may still be navigating: a script run
    # before the page has loaded dies with the context it ran in.
    loaded = "location.href === %s && document.readyState === 'complete'" % (
        json.dumps(page_url))
    while evaluate(loaded).get("result", {}).get("result", {}).get("value") is not True:
        if time.time() > deadline:
            sys.exit("the page did not load within %d s" % TIMEOUT_S)
        time.sleep(0.2)
    m = evaluate(script)
    result = m.get("result", {}).get("result", {})
    if "value" not in result:
        sys.exit("the page's script failed: " + json.dumps(m)[:2000])
    print(result["value"])


if __name__ == "__main__":
    main()
