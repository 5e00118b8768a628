"""A client of shoal serve's HTTP inference API (docs/serve.md).

It speaks the Open Inference Protocol (KServe v2) -- health, model
metadata, inference with binary tensor data -- and shoal's image route,
POST /v1/models/NAME/classify. Standard library and numpy only.
"""

import http.client
import json
import socket
import ssl
import urllib.parse

import numpy as np

__all__ = ["Client", "ShoalError"]
__version__ = "0.1.0"


class ShoalError(Exception):
    """An answer other than 200: `status` is the HTTP status, the message
    the server's {"error": ...}."""

    def __init__(self, status, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class Client:
    """One server, e.g. Client("http://127.0.0.1:8000").

    With an https:// URL, `ca` is the cluster CA's certificate (ca.crt)
    that serve's certificate must be signed by; serve's certificate names
    its role, not its address, so `server_name` (default
    "shoal-coordinator") is the name checked, as shoal's own clients do.
    `cert` and `key` are a coordinator certificate of the same CA to show;
    `token` is the bearer token of serve's --http-token-file. `timeout` is
    each request's deadline in seconds.
    """

    def __init__(self, url, token=None, ca=None, cert=None, key=None,
                 server_name="shoal-coordinator", timeout=30.0):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"{url}: give http://HOST:PORT or https://HOST:PORT")
        self.host = u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.https = u.scheme == "https"
        self.token = token
        self.timeout = timeout
        self.server_name = server_name
        self.context = None
        if self.https:
            self.context = ssl.create_default_context(cafile=ca)
            if cert:
                self.context.load_cert_chain(cert, key)
        elif ca or cert:
            raise ValueError("ca, cert and key need an https:// URL")

    # --- HTTP ------------------------------------------------------------

    def _connect(self):
        if not self.https:
            return http.client.HTTPConnection(self.host, self.port,
                                              timeout=self.timeout)
        conn = http.client.HTTPSConnection(self.host, self.port,
                                           timeout=self.timeout,
                                           context=self.context)
        # Dial the address, verify the certificate against the role name.
        sock = socket.create_connection((self.host, self.port),
                                                    self.timeout)
        conn.sock = self.context.wrap_socket(sock,
                                             server_hostname=self.server_name)
        return conn

    def _request(self, method, path, body=None, headers=None):
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        conn = self._connect()
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            data = r.read()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data
        finally:
            conn.close()

    def _json(self, method, path, body=None, headers=None, ok=(200,)):
        status, _, data = self._request(method, path, body, headers)
        j = json.loads(data) if data else {}
        if status not in ok:
            raise ShoalError(status, j.get("error", data.decode(errors="replace")))
        return status, j

    # --- Open Inference Protocol -------------------------------------------

    def live(self):
        """True when the server answers GET /v2/health/live with 200."""
        return self._request("GET", "/v2/health/live")[0] == 200

    def ready(self):
        """True when a plan is deployed and requests are taken."""
        return self._request("GET", "/v2/health/ready")[0] == 200

    def metadata(self, model):
        """The model's name, inputs and outputs (name, datatype, shape)."""
        return self._json("GET", "/v2/models/" + urllib.parse.quote(model))[1]

    def infer(self, model, x, binary=True):
        """The model's output for input `x` (a numpy array, sent as FP32),
        as a numpy float32 array. `binary`: the binary tensor data
        extension both ways, else JSON tensors."""
        x = np.ascontiguousarray(x, dtype="<f4")
        meta_input = self._input_name(model)
        inp = {"name": meta_input, "datatype": "FP32", "shape": list(x.shape)}
        req = {}
        headers = {}
        if binary:
            raw = x.tobytes()
            inp["parameters"] = {"binary_data_size": len(raw)}
            req["parameters"] = {"binary_data_output": True}
            req["inputs"] = [inp]
            head = json.dumps(req).encode()
            body = head + raw
            headers["Inference-Header-Content-Length"] = str(len(head))
            headers["Content-Type"] = "application/octet-stream"
        else:
            inp["data"] = x.ravel().tolist()
            req["inputs"] = [inp]
            body = json.dumps(req).encode()
            headers["Content-Type"] = "application/json"
        status, h, data = self._request(
            "POST", "/v2/models/%s/infer" % urllib.parse.quote(model), body,
            headers)
        if status != 200:
            try:
                message = json.loads(data).get("error", "")
            except ValueError:
                message = data.decode(errors="replace")
            raise ShoalError(status, message)
        n = h.get("inference-header-content-length")
        head = json.loads(data[:int(n)] if n is not None else data)
        out = head["outputs"][0]
        shape = out["shape"]
        if n is not None and "binary_data_size" in out.get("parameters", {}):
            size = out["parameters"]["binary_data_size"]
            raw = data[int(n):int(n) + size]
            return np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
        return np.asarray(out["data"], dtype=np.float32).reshape(shape)

    def _input_name(self, model):
        if not hasattr(self, "_inputs"):
            self._inputs = {}
        if model not in self._inputs:
            self._inputs[model] = self.metadata(model)["inputs"][0]["name"]
        return self._inputs[model]

    # --- The image route ---------------------------------------------------

    def classify(self, model, image, top_k=5):
        """The top_k classes for an image (a path, or the bytes of a JPEG,
        PNG or BMP): a list of {"index", "score", and "name" where the
        model has names}, highest first."""
        if not isinstance(image, (bytes, bytearray)):
            with open(image, "rb") as f:
                image = f.read()
        path = "/v1/models/%s/classify?top_k=%d" % (urllib.parse.quote(model),
                                                    int(top_k))
        return self._json("POST", path, image,
                          {"Content-Type": "application/octet-stream"})[1]["classes"]
