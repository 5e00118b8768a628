#!/usr/bin/env python3
"""A hostile gRPC peer: many connections, each sending part of a message
that declares itself far larger, round after round.

gRPC frames a message as a 5-byte prefix (flag, 4-byte length) and then the
bytes. A client library always sends whole messages, so this speaks HTTP/2
itself (python3-h2): each connection opens one call to METHOD, declares
DECLARED bytes and sends SEND of them, as fast as the server's flow-control
windows let it, then leaves the connection open with the message unfinished.
After a round, the next one opens new connections beside the old ones.

It prints one JSON line per round: connections still open, bytes the server
accepted, and how many connections the server closed (GOAWAY, reset or EOF).
The worker's slow test (runtime/worker_flood_slowtest.cc) reads the worker's
memory meanwhile.

With --ignore-goaway a connection is counted closed only when the server
closes its socket, not when it asks the peer to go (GOAWAY).

Usage: grpc_flood.py HOST:PORT [--connections N] [--declared BYTES]
       [--send BYTES] [--rounds R] [--hold SECONDS] [--ignore-goaway]
"""
import argparse
import json
import select
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions

IGNORE_GOAWAY = False


class Peer:
    """One connection with one unfinished call."""

    def __init__(self, host, port, method, declared, send):
        self.sock = socket.create_connection((host, port), timeout=5)
        self.sock.setblocking(False)
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.stream = self.conn.get_next_available_stream_id()
        self.conn.send_headers(self.stream, [
            (":method", "POST"), (":scheme", "http"), (":path", method),
            (":authority", f"{host}:{port}"),
            ("content-type", "application/grpc"), ("te", "trailers"),
        ])
        self.pending = struct.pack(">BI", 0, declared)
        self.left = send
        self.sent = 0
        self.closed = False
        self.out = bytearray()
        self.flush()

    def fill(self):
        """Queues as much of the message as the windows allow."""
        while not self.closed and (self.pending or self.left > 0):
            window = min(self.conn.local_flow_control_window(self.stream),
                         self.conn.max_outbound_frame_size)
            if window <= 0:
                return
            if not self.pending:
                n = min(self.left, 1 << 16)
                self.pending = b"\0" * n
                self.left -= n
            chunk, self.pending = self.pending[:window], self.pending[window:]
            self.conn.send_data(self.stream, chunk)
            self.sent += len(chunk)

    def flush(self):
        # h2 hands over its bytes once; what the socket does not take now
        # waits in self.out.
        self.out += self.conn.data_to_send()
        while self.out and not self.closed:
            try:
                n = self.sock.send(self.out)
            except BlockingIOError:
                return
            except OSError:
                self.close()
                return
            del self.out[:n]

    def on_readable(self):
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            self.close()
            return
        if not data:
            self.close()
            return
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.close()
            return
        for e in events:
            if isinstance(e, h2.events.ConnectionTerminated) and IGNORE_GOAWAY:
                continue  # as a hostile peer would: only the socket's end counts
            if isinstance(e, (h2.events.ConnectionTerminated,
                              h2.events.StreamReset, h2.events.StreamEnded)):
                self.close()
                return

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass


def pump(peers, seconds):
    """Sends and reads on every open connection for `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        live = [p for p in peers if not p.closed]
        if not live:
            return
        for p in live:
            p.fill()
            p.flush()
        r, _, _ = select.select([p.sock for p in live if not p.closed], [],
                                [], 0.05)
        ready = set(r)
        for p in live:
            if not p.closed and p.sock in ready:
                p.on_readable()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("address")
    ap.add_argument("--method", default="/shoal.rpc.Worker/Send")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--declared", type=int, default=100 << 20)
    ap.add_argument("--send", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hold", type=float, default=2.0)
    ap.add_argument("--ignore-goaway", action="store_true",
                    help="keep sending after the server's GOAWAY")
    a = ap.parse_args()
    global IGNORE_GOAWAY
    IGNORE_GOAWAY = a.ignore_goaway
    host, port = a.address.rsplit(":", 1)
    peers = []
    for r in range(a.rounds):
        opened = refused = 0
        for _ in range(a.connections):
            try:
                peers.append(Peer(host, int(port), a.method, a.declared, a.send))
                opened += 1
            except OSError:
                refused += 1
        pump(peers, a.hold)
        print(json.dumps({
            "round": r + 1, "opened": opened, "refused": refused,
            "open": sum(not p.closed for p in peers),
            "closed_by_server": sum(p.closed for p in peers),
            "sent_bytes": sum(p.sent for p in peers),
        }), flush=True)
    for p in peers:
        p.close()


if __name__ == "__main__":
    sys.exit(main())
