"""docker/*.Dockerfile agree with the build, the chart and the scripts they package.

No Docker engine is needed: every fact an image build or a pod start relies on is checked
against the tree and the built binaries: COPY sources exist, the operator stage's sources
configure the operator on their own, the runtime stages install the packages that provide
the binaries' shared libraries and the payload (docker/runtime_payload.sh) carries the rest,
the from-source and prebuilt stages differ only in where the payload comes from, the base
images are build ARGs, the flags and ports the chart passes are accepted/exposed, the user
is numeric (the chart sets runAsNonRoot), the worker's entry point is the script the
operator's pods run, and the LibTorch venv is copied from where tools/setup.sh puts it.
tests/e2e/docker/images_test.py builds the Debian images with buildah and runs them.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
BINARY_DIR = os.environ.get("DDP3D_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
OPERATOR_BIN = os.path.join(BINARY_DIR, "operator", "ddp3d-operator")
WORKER_BIN = os.path.join(BINARY_DIR, "worker", "ddp3d")
# Present in every Debian/Ubuntu base image (apt itself depends on them).
BASE_IMAGE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6"}


def read(rel):
    with open(os.path.join(SOURCE_DIR, rel)) as f:
        return f.read()


def instructions(dockerfile):
    """[(stage index, KEYWORD, argument text)] with continuations joined, comments dropped."""
    text = re.sub(r"\\\n", " ", "\n".join(
        line for line in read(dockerfile).splitlines() if not line.lstrip().startswith("#")))
    out, stage = [], -1
    for line in text.splitlines():
        if not line.strip():
            continue
        keyword, _, arg = line.strip().partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        out.append((stage, keyword, arg.strip()))
    return out


def args_of(dockerfile):
    """ARG and ENV defaults, for ${VAR} expansion in the tests."""
    values = {}
    for _, kw, arg in instructions(dockerfile):
        if kw in ("ARG", "ENV"):
            for token in shlex.split(arg):
                if "=" in token:
                    k, v = token.split("=", 1)
                    values[k] = v
    return values


def expand(text, values):
    return re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def copies(dockerfile):
    """[(stage, from-stage or None, [sources], destination)]."""
    out = []
    for stage, kw, arg in instructions(dockerfile):
        if kw != "COPY":
            continue
        words = shlex.split(arg)
        opts = [w for w in words if w.startswith("--")]
        paths = [w for w in words if not w.startswith("--")]
        src_stage = next((o.split("=", 1)[1] for o in opts if o.startswith("--from=")), None)
        out.append((stage, src_stage, paths[:-1], paths[-1]))
    return out


def stages(dockerfile):
    """[(image or parent stage, name or None)] per FROM, in order."""
    out = []
    for _, kw, arg in instructions(dockerfile):
        if kw == "FROM":
            words = [w for w in arg.split() if not w.startswith("--")]
            out.append((words[0], words[2] if len(words) == 3 and words[1].upper() == "AS" else None))
    return out


def stage_index(dockerfile, name):
    return next(i for i, (_, n) in enumerate(stages(dockerfile)) if n == name)


def chain(dockerfile, name):
    """Stage indices from the first stage of this file an image derives from up to `name`:
    the instructions that make the image `--target name` builds."""
    all_stages = stages(dockerfile)
    out, i = [], stage_index(dockerfile, name)
    while True:
        out.insert(0, i)
        parent = all_stages[i][0]
        names = [n for _, n in all_stages[:i]]
        if parent not in names:
            return out
        i = names.index(parent)


def effective(dockerfile, name, keyword):
    """The arguments of `keyword` along the chain of `name`, in order."""
    idx = set(chain(dockerfile, name))
    return [arg for s, kw, arg in instructions(dockerfile) if s in idx and kw == keyword]


def this_codename():
    with open("/etc/os-release") as f:
        return re.search(r"VERSION_CODENAME=(\w+)", f.read()).group(1)


def apt_installs(dockerfile, stage):
    pkgs = []
    for s, kw, arg in instructions(dockerfile):
        if s == stage and kw == "RUN" and "apt-get install" in arg:
            after = arg.split("apt-get install", 1)[1].split("&&", 1)[0]
            pkgs += [w for w in after.split() if not w.startswith("-")]
    return set(pkgs)


def library_packages(binary):
    """Debian packages providing the shared libraries `binary` links directly (its NEEDED
    entries; apt brings their own dependencies)."""
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    packages = {}
    for line in ldd.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if not m or m.group(1) not in needed:
            continue
        owner = subprocess.run(["dpkg", "-S", os.path.realpath(m.group(2))], capture_output=True, text=True)
        if owner.returncode != 0:  # not from a Debian package (e.g. the torch wheel)
            owner = subprocess.run(["dpkg", "-S", m.group(2)], capture_output=True, text=True)
        if owner.returncode == 0:
            packages[m.group(1)] = owner.stdout.split(":")[0].strip()
        else:
            packages[m.group(1)] = None
    return packages


def package_stem(name):
    """libyaml-cpp0.7 -> libyaml-cpp, libssl3t64 -> libssl: names across releases."""
    return re.sub(r"[0-9.]+(t64)?$", "", name)


class DebianPayloadImage:
    """What docker/operator.Dockerfile and docker/worker-cpu.Dockerfile share: Debian bases
    named by build ARGs, a `build` stage that makes /payload with docker/runtime_payload.sh,
    a `runtime-base` stage with the apt packages, and two final stages that differ only in
    where the payload comes from: `prebuilt` (tools/build_images.sh's context) and `runtime`
    (the default of a plain `docker build`, from source)."""
    DOCKERFILE = None
    BINARY = None
    PAYLOAD_SOURCE = None  # the binary, as the build stage names it

    def test_copy_sources_exist(self):
        prebuilt = {i for i, (_, name) in enumerate(stages(self.DOCKERFILE))
                    if name in ("prebuilt", "prebuilt-cuda")}
        for stage, src_stage, sources, _ in copies(self.DOCKERFILE):
            if src_stage is None and stage not in prebuilt:  # they read build_images.sh's context
                for s in sources:
                    self.assertTrue(os.path.exists(os.path.join(SOURCE_DIR, s)), f"COPY {s}")

    def test_bases_are_build_args_naming_this_release(self):
        values = args_of(self.DOCKERFILE)
        codename = this_codename()
        self.assertEqual(values["BUILD_IMAGE"], f"debian:{codename}",
                         "runtime package names are checked against this machine's release")
        self.assertEqual(values["BASE_IMAGE"], f"debian:{codename}-slim")
        all_stages = stages(self.DOCKERFILE)
        self.assertEqual(all_stages[stage_index(self.DOCKERFILE, "build")][0], "${BUILD_IMAGE}")
        self.assertEqual(all_stages[stage_index(self.DOCKERFILE, "runtime-base")][0], "${BASE_IMAGE}")
        build_images = read("tools/build_images.sh")
        self.assertIn("--build-arg BASE_IMAGE=", build_images)
        self.assertIn(f"SUITE={codename}", build_images)

    def test_prebuilt_and_from_source_differ_only_in_the_payload(self):
        all_stages = stages(self.DOCKERFILE)
        self.assertEqual(all_stages[-1], ("runtime-base", "runtime"),
                         "a plain `docker build` (the last stage) builds from source")
        self.assertEqual(all_stages[stage_index(self.DOCKERFILE, "prebuilt")][0], "runtime-base")
        body = {name: [(kw, arg) for s, kw, arg in instructions(self.DOCKERFILE)
                       if s == stage_index(self.DOCKERFILE, name) and kw != "FROM"]
                for name in ("prebuilt", "runtime")}
        self.assertEqual(body["prebuilt"], [("COPY", "payload/ /")])
        self.assertEqual(body["runtime"], [("COPY", "--from=build /payload/ /")])
        self.assertIn("--target prebuilt", read("tools/build_images.sh"))
        self.assertIn(self.DOCKERFILE, read("tools/build_images.sh"))

    def test_build_stage_makes_the_payload(self):
        runs = [arg for s, kw, arg in instructions(self.DOCKERFILE)
                if s == stage_index(self.DOCKERFILE, "build") and kw == "RUN"]
        self.assertRegex(runs[-1], rf"&& bash docker/runtime_payload.sh {re.escape(self.PAYLOAD_SOURCE)} /payload$")

    def test_runtime_installs_the_binarys_libraries(self):
        self.check_runtime_packages()

    def check_runtime_packages(self):
        """Exact package names: this machine is the release the bases name."""
        runtime = apt_installs(self.DOCKERFILE, stage_index(self.DOCKERFILE, "runtime-base"))
        for lib, pkg in library_packages(self.BINARY).items():
            if pkg is None:
                continue  # not Debian's: the payload carries it (test_payload_resolves_...)
            self.assertTrue(pkg in runtime or pkg in BASE_IMAGE_PACKAGES,
                            f"{lib} ({pkg}) is not installed in the runtime stage: {sorted(runtime)}")
        return runtime

    def test_payload_resolves_every_library_apt_does_not_install(self):
        self.check_payload()

    def check_payload(self):
        """runtime_payload.sh on the real binary: the image's LD_LIBRARY_PATH and the payload
        give the binary every library no Debian package provides, the binary is where the
        ENTRYPOINT or DDP3D_BIN expects it, and it still runs."""
        with tempfile.TemporaryDirectory() as tmp:
            res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "docker", "runtime_payload.sh"),
                                  self.BINARY, tmp, "--link"], capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            name = os.path.basename(self.BINARY)
            binary = os.path.join(tmp, "usr", "local", "bin", name)
            self.assertTrue(os.access(binary, os.X_OK))
            self.assertLess(os.path.getsize(binary), os.path.getsize(self.BINARY) + 1)
            env = [arg for arg in effective(self.DOCKERFILE, "prebuilt", "ENV")]
            lib_path = next((v for e in env for k, v in (t.split("=", 1) for t in shlex.split(e) if "=" in t)
                             if k == "LD_LIBRARY_PATH"), None)
            libdir = os.path.join(tmp, "opt", "ddp3d", "lib")
            carried = set(os.listdir(libdir))
            foreign = {lib for lib, pkg in library_packages(self.BINARY).items() if pkg is None}
            self.assertTrue(foreign <= carried, f"not in the payload: {sorted(foreign - carried)}")
            if carried:
                self.assertEqual(lib_path, "/opt/ddp3d/lib", "the image must name the payload's libraries")
            # With the payload's folder first (as LD_LIBRARY_PATH is in the image), every
            # library that is not Debian's resolves inside the payload.
            ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True,
                                 env={**os.environ, "LD_LIBRARY_PATH": libdir}).stdout
            for line in ldd.splitlines():
                m = re.match(r"\s*(\S+) => (/\S+)", line)
                if m and m.group(1) in carried:
                    self.assertTrue(m.group(2).startswith(libdir), line)
            res = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60,
                                 env={**os.environ, "LD_LIBRARY_PATH": libdir})
            self.assertEqual(res.returncode, 0, res.stderr[-2000:])
            return carried


class PayloadScriptTest(unittest.TestCase):
    def test_a_library_ldd_cannot_find_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "f.c"), "w") as f:
                f.write("int ddp3d_f(void) { return 1; }\n")
            with open(os.path.join(tmp, "m.c"), "w") as f:
                f.write("int ddp3d_f(void);\nint main(void) { return ddp3d_f() - 1; }\n")
            subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(tmp, "libddp3dgone.so"),
                            os.path.join(tmp, "f.c")], check=True)
            subprocess.run(["cc", "-o", os.path.join(tmp, "m"), os.path.join(tmp, "m.c"),
                            "-L" + tmp, "-lddp3dgone"], check=True)
            os.remove(os.path.join(tmp, "libddp3dgone.so"))
            res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "docker", "runtime_payload.sh"),
                                  os.path.join(tmp, "m"), os.path.join(tmp, "out")],
                                 capture_output=True, text=True)
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("libddp3dgone.so", res.stderr)


class OperatorImageTest(DebianPayloadImage, unittest.TestCase):
    DOCKERFILE = "docker/operator.Dockerfile"
    BINARY = OPERATOR_BIN
    PAYLOAD_SOURCE = "build/operator/ddp3d-operator"

    def test_build_stage_sources_alone_configure_the_operator(self):
        """The stage copies only some folders: they must be enough for its cmake line."""
        run_line = next(arg for s, kw, arg in instructions(self.DOCKERFILE)
                        if s == 0 and kw == "RUN" and "cmake -S" in arg)
        cmake_args = [w for w in shlex.split(run_line.split("&&")[0]) if w.startswith("-D")]
        with tempfile.TemporaryDirectory() as tmp:
            for stage, src_stage, sources, dest in copies(self.DOCKERFILE):
                if stage != 0 or src_stage is not None:
                    continue
                for s in sources:
                    src = os.path.join(SOURCE_DIR, s)
                    target = os.path.join(tmp, dest, os.path.basename(s.rstrip("/"))) \
                        if os.path.isfile(src) else os.path.join(tmp, dest)
                    if os.path.isdir(src):
                        shutil.copytree(src, target, dirs_exist_ok=True)
                    else:
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        shutil.copy(src, target)
            self.assertTrue(os.path.isfile(os.path.join(tmp, "docker", "runtime_payload.sh")))
            res = subprocess.run(["cmake", "-S", tmp, "-B", os.path.join(tmp, "build"), "-G", "Ninja",
                                  *cmake_args], capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stdout[-2000:] + res.stderr[-3000:])
            targets = subprocess.run(["cmake", "--build", os.path.join(tmp, "build"), "--target", "help"],
                                     capture_output=True, text=True).stdout
            self.assertIn("ddp3d-operator", targets)
            self.assertNotIn("ddp3d_torch", targets, "the operator image must not need LibTorch")

    def test_runtime_installs_the_binarys_libraries(self):
        runtime = self.check_runtime_packages()
        self.assertIn("libcpprest2.10", runtime)
        self.assertIn("libyaml-cpp0.7", runtime)
        for lib, pkg in library_packages(self.BINARY).items():
            self.assertIsNotNone(pkg, f"{lib} comes from no Debian package")

    def test_payload_resolves_every_library_apt_does_not_install(self):
        carried = self.check_payload()
        self.assertEqual(carried, set(), "every library of the operator is Debian's")

    def test_chart_flags_are_accepted_by_the_binary(self):
        template = read("charts/ddp3d/templates/deployment.yaml")
        flags = sorted(set(re.findall(r"^\s*- (--[a-z-]+)", template, re.M)))
        self.assertEqual(flags, ["--allowed-service-accounts", "--health-address", "--kueue",
                                 "--leader-elect", "--leader-election-id", "--metrics-address",
                                 "--namespace", "--shutdown-grace-seconds",
                                 "--trusted-namespaces", "--watch-nodes"])
        # The chart's rendered form (values.yaml defaults), parsed by the real binary.
        argv = ["--leader-elect", "--leader-election-id=ddp3d-operator",
                "--metrics-address=:8080", "--health-address=:8081", "--namespace=a,b",
                "--trusted-namespaces=c", "--allowed-service-accounts=default",
                "--watch-nodes=true", "--kueue=false", "--shutdown-grace-seconds=3", "--help"]
        res = subprocess.run([OPERATOR_BIN, *argv], capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)
        res = subprocess.run([OPERATOR_BIN, "--no-such-flag", "--help"], capture_output=True,
                             text=True, timeout=30)
        self.assertNotEqual(res.returncode, 0, "unknown flags are rejected, so the check above means something")

    def test_entrypoint_user_and_ports_match_the_chart(self):
        ins = instructions(self.DOCKERFILE)
        for target in ("prebuilt", "runtime"):
            # runtime_payload.sh puts the binary in /usr/local/bin.
            self.assertEqual(effective(self.DOCKERFILE, target, "ENTRYPOINT"),
                             ['["/usr/local/bin/ddp3d-operator"]'])
            self.assertEqual(effective(self.DOCKERFILE, target, "USER"),
                             effective(self.DOCKERFILE, "runtime-base", "USER"))
        user = effective(self.DOCKERFILE, "runtime", "USER")[-1]
        uid = user.split(":")[0]
        self.assertTrue(uid.isdigit() and int(uid) != 0,
                        "the chart sets runAsNonRoot, which needs a numeric non-root USER")
        values = read("charts/ddp3d/values.yaml")
        self.assertIn("runAsNonRoot: true", values)
        chart_ports = {int(p) for p in re.findall(r"^(?:metrics|health):\s*\n\s*port:\s*(\d+)", values, re.M)}
        exposed = {int(p) for _, kw, arg in ins if kw == "EXPOSE" for p in arg.split()}
        self.assertEqual(chart_ports, {8080, 8081})
        self.assertEqual(exposed, chart_ports)


class WorkerImageTest(unittest.TestCase):
    DOCKERFILE = "docker/worker.Dockerfile"

    def test_copy_sources_exist(self):
        for stage, src_stage, sources, _ in copies(self.DOCKERFILE):
            if src_stage is None:
                for s in sources:
                    self.assertTrue(os.path.exists(os.path.join(SOURCE_DIR, s)), f"COPY {s}")

    def test_built_by_setup_sh_with_the_cuda_build_on(self):
        values = args_of(self.DOCKERFILE)
        runs = [arg for s, kw, arg in instructions(self.DOCKERFILE) if s == 0 and kw == "RUN"]
        self.assertIn("bash tools/setup.sh", runs)
        setup = read("tools/setup.sh")
        default_torch = re.search(r'TORCH_VERSION="\$\{DDP3D_TORCH_VERSION:-([^}]+)\}"', setup).group(1)
        self.assertEqual(values["DDP3D_TORCH_VERSION"], default_torch)
        for var in ("DDP3D_CACHE", "DDP3D_BUILD_DIR", "DDP3D_TORCH_VERSION", "DDP3D_CMAKE_ARGS"):
            self.assertIn(var, setup, f"setup.sh reads {var}")
        top = read("CMakeLists.txt")
        for opt in re.findall(r"-D(\w+)=", values["DDP3D_CMAKE_ARGS"]):
            self.assertRegex(top, rf"option\({opt}\b", f"{opt} is a CMake option")
        # The runtime stage copies the venv from where setup.sh created it (the binary's
        # RPATH points there) and the binary from the build dir.
        venv = f"{values['DDP3D_CACHE']}/venv-torch-{values['DDP3D_TORCH_VERSION']}"
        from_build = {sources[0]: dest for _, src, sources, dest in copies(self.DOCKERFILE) if src == "build"}
        self.assertEqual(from_build.get(venv), venv)
        self.assertIn(f"{values['DDP3D_BUILD_DIR']}/worker/ddp3d", from_build)
        self.assertEqual(values["DDP3D_BIN"], from_build[f"{values['DDP3D_BUILD_DIR']}/worker/ddp3d"])

    def test_entrypoint_is_the_script_the_operator_runs(self):
        ins = instructions(self.DOCKERFILE)
        entry = next(arg for _, kw, arg in ins if kw == "ENTRYPOINT")
        self.assertEqual(entry, '["bash", "tools/dist_train.sh"]')
        workdir = [arg for s, kw, arg in ins if kw == "WORKDIR" and s == 1][-1]
        dests = {dest.rstrip("/") for s, src, _, dest in copies(self.DOCKERFILE) if s == 1 and src is None}
        self.assertTrue({"tools", "configs"} <= dests, f"{workdir} holds tools/ and configs/")
        self.assertTrue(os.path.isfile(os.path.join(SOURCE_DIR, "tools", "dist_train.sh")))
        # The operator's default pod command is the same script, relative to the WORKDIR.
        controller = read("operator/controller/desired_objects.cpp")
        self.assertIn('value::string("tools/dist_train.sh")', controller)
        # dist_train.sh finds the binary through DDP3D_BIN first.
        self.assertIn("DDP3D_BIN", read("tools/ddp3d_binary.sh"))

    def test_runs_as_a_numeric_non_root_user(self):
        # The operator sets runAsNonRoot on Restricted pods; the kubelet can verify it only
        # against a numeric USER, and the last USER of the final stage is the one that runs.
        users = [arg for s, kw, arg in instructions(self.DOCKERFILE) if s == 1 and kw == "USER"]
        self.assertTrue(users, "the runtime stage sets USER")
        uid = users[-1].split(":")[0]
        self.assertTrue(uid.isdigit() and int(uid) != 0, f"USER {users[-1]} is numeric, not root")
        self.assertIn('psc["runAsNonRoot"] = value::boolean(true)',
                      read("operator/controller/pod_security_defaults.cpp"))

    def test_runtime_installs_the_binarys_libraries(self):
        runtime = {package_stem(p) for p in apt_installs(self.DOCKERFILE, 1)}
        for lib, pkg in library_packages(WORKER_BIN).items():
            if pkg is None or pkg in BASE_IMAGE_PACKAGES:
                continue  # LibTorch's own libraries travel in the venv
            self.assertIn(package_stem(pkg), runtime, f"{lib} ({pkg}) is not installed in the runtime stage")


class WorkerCpuImageTest(DebianPayloadImage, unittest.TestCase):
    DOCKERFILE = "docker/worker-cpu.Dockerfile"
    BINARY = WORKER_BIN
    PAYLOAD_SOURCE = "/src/build/worker/ddp3d"
    TARGETS = ("prebuilt", "prebuilt-cuda", "runtime")

    def test_built_by_setup_sh_without_cuda(self):
        values = args_of(self.DOCKERFILE)
        runs = [arg for s, kw, arg in instructions(self.DOCKERFILE)
                if s == stage_index(self.DOCKERFILE, "build") and kw == "RUN"]
        self.assertRegex(runs[-1], r"^bash tools/setup.sh\s+&&")
        setup = read("tools/setup.sh")
        default_torch = re.search(r'TORCH_VERSION="\$\{DDP3D_TORCH_VERSION:-([^}]+)\}"', setup).group(1)
        self.assertEqual(values["DDP3D_TORCH_VERSION"], default_torch)
        self.assertEqual(f"{values['DDP3D_BUILD_DIR']}/worker/ddp3d", self.PAYLOAD_SOURCE)
        top = read("CMakeLists.txt")
        for opt in re.findall(r"-D(\w+)=", values["DDP3D_CMAKE_ARGS"]):
            self.assertRegex(top, rf"option\({opt}\b", f"{opt} is a CMake option")
        self.assertNotIn("CUDA", values["DDP3D_CMAKE_ARGS"] + runs[-1])

    def test_entrypoint_is_the_script_the_operator_runs(self):
        base = stage_index(self.DOCKERFILE, "runtime-base")
        dests = {dest.rstrip("/") for s, src, _, dest in copies(self.DOCKERFILE) if s == base and src is None}
        self.assertTrue({"tools", "configs"} <= dests)
        for target in self.TARGETS:
            self.assertEqual(effective(self.DOCKERFILE, target, "ENTRYPOINT"), ['["bash", "tools/dist_train.sh"]'])
            self.assertEqual(effective(self.DOCKERFILE, target, "WORKDIR")[-1], "/workspace/ddp3d")
            env = dict(t.split("=", 1) for e in effective(self.DOCKERFILE, target, "ENV")
                       for t in shlex.split(e) if "=" in t)
            # runtime_payload.sh puts the binary there; dist_train.sh finds it through DDP3D_BIN.
            self.assertEqual(env["DDP3D_BIN"], "/usr/local/bin/ddp3d")
        self.assertIn('value::string("tools/dist_train.sh")', read("operator/controller/desired_objects.cpp"))

    def test_runs_as_a_numeric_non_root_user(self):
        for target in self.TARGETS:
            user = effective(self.DOCKERFILE, target, "USER")[-1]
            uid, _, gid = user.partition(":")
            self.assertTrue(uid.isdigit() and int(uid) != 0 and gid.isdigit(), f"{target}: USER {user}")
            useradd = next(arg for arg in effective(self.DOCKERFILE, target, "RUN") if "useradd" in arg)
            self.assertIn(f"--uid {uid} ", useradd)

    def test_payload_resolves_every_library_apt_does_not_install(self):
        carried = self.check_payload()
        self.assertTrue({"libtorch_cpu.so", "libc10.so"} <= carried, carried)
        self.assertNotIn("libtorch_cuda.so", carried, "the CPU image carries only what ldd needs")

    def test_cuda_image_is_the_prebuilt_one_with_the_whole_wheel(self):
        """`build_images.sh --cuda`: the same runtime, a CUDA build's binary, every library of
        the wheels (a CUDA build dlopen()s what ldd cannot see), and the driver capability
        without which the NVIDIA container runtime mounts no libcuda."""
        all_stages = stages(self.DOCKERFILE)
        self.assertEqual(all_stages[stage_index(self.DOCKERFILE, "prebuilt-cuda")][0], "runtime-base")
        body = [(kw, arg) for s, kw, arg in instructions(self.DOCKERFILE)
                if s == stage_index(self.DOCKERFILE, "prebuilt-cuda") and kw != "FROM"]
        self.assertEqual(body, [("ENV", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"), ("COPY", "payload/ /")])
        build_images = read("tools/build_images.sh")
        self.assertIn("[worker-cuda]=prebuilt-cuda", build_images)
        self.assertIn("[worker-cuda]=--whole-wheel", build_images)
        self.assertIn("DDP3D_WITH_CUDA=1", build_images)
        # The whole wheel, on the CPU build's binary (the same wheel a CUDA build links).
        with tempfile.TemporaryDirectory() as tmp:
            res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "docker", "runtime_payload.sh"),
                                  self.BINARY, tmp, "--link", "--whole-wheel"], capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            carried = set(os.listdir(os.path.join(tmp, "opt", "ddp3d", "lib")))
            for lib in ("libtorch_cuda.so", "libc10_cuda.so", "libcudnn.so.9", "libnccl.so.2",
                        "libcudnn_engines_precompiled.so.9", "libcudart.so.13"):
                self.assertIn(lib, carried)
            self.assertTrue(any(lib.startswith("libnvrtc-builtins") for lib in carried), sorted(carried))
            self.assertNotIn("libtorch_python.so", carried, "needs a libpython the image lacks")
            res = subprocess.run(["bash", os.path.join(SOURCE_DIR, "docker", "runtime_payload.sh"),
                                  self.BINARY, os.path.join(tmp, "again"), "--whole-wheel", "--bogus"],
                                 capture_output=True, text=True)
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("unknown option --bogus", res.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
