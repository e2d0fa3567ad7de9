#!/usr/bin/env python3
"""Packs a root filesystem directory into a one-layer OCI image archive.

    oci_archive.py ROOTFS IMAGE-NAME OUT.tar [--entrypoint ARG...] [--cmd ARG...]
                   [--user UID:GID]

The archive is an OCI image layout (oci-layout, index.json, blobs/sha256/...) that
`ctr images import` loads under IMAGE-NAME (the io.containerd.image.name annotation).
No registry or daemon is involved. The layer is an uncompressed tar with every owner
set to root and every mtime to 0, so the same ROOTFS gives the same image digest.
"""

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile


def layer_tar(rootfs):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for parent, dirs, files in os.walk(rootfs):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                path = os.path.join(parent, name)
                info = tar.gettarinfo(path, arcname=os.path.relpath(path, rootfs))
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mtime = 0
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def add_blob(out, blobs, data, media_type):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest not in blobs:
        blobs.add(digest)
        add_file(out, "blobs/sha256/" + digest.split(":", 1)[1], data)
    return {"mediaType": media_type, "digest": digest, "size": len(data)}


def add_file(out, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    out.addfile(info, io.BytesIO(data))


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rootfs")
    ap.add_argument("image")
    ap.add_argument("out")
    ap.add_argument("--entrypoint", nargs="+", default=[])
    ap.add_argument("--cmd", nargs="+", default=[])
    ap.add_argument("--user", default="")
    args = ap.parse_args()
    if not os.path.isdir(args.rootfs):
        sys.exit(f"oci_archive.py: {args.rootfs}: not a directory")
    if ":" not in args.image.rsplit("/", 1)[-1]:
        sys.exit(f"oci_archive.py: image name {args.image!r} has no :tag")

    layer = layer_tar(args.rootfs)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "WorkingDir": "/",
            **({"Entrypoint": args.entrypoint} if args.entrypoint else {}),
            **({"Cmd": args.cmd} if args.cmd else {}),
            **({"User": args.user} if args.user else {}),
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
    }
    tmp = f"{args.out}.tmp.{os.getpid()}"
    blobs = set()
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as out:
        add_file(out, "oci-layout", canonical({"imageLayoutVersion": "1.0.0"}))
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": add_blob(out, blobs, canonical(config), "application/vnd.oci.image.config.v1+json"),
            "layers": [add_blob(out, blobs, layer, "application/vnd.oci.image.layer.v1.tar")],
        }
        desc = add_blob(out, blobs, canonical(manifest), manifest["mediaType"])
        desc["annotations"] = {
            "io.containerd.image.name": args.image,
            "org.opencontainers.image.ref.name": args.image.rsplit(":", 1)[1],
        }
        desc["platform"] = {"architecture": "amd64", "os": "linux"}
        add_file(out, "index.json", canonical({"schemaVersion": 2, "manifests": [desc]}))
    os.replace(tmp, args.out)
    print(desc["digest"])


if __name__ == "__main__":
    main()
