"""pip install . : the wafersim package built with CMake for the running
interpreter, and the wafersim program inside it (pyproject.toml).

The CMake build goes to build-pip/ (a fresh configure: the first install takes
as long as a build), or to WAFERSIM_BUILD_DIR when that names a configured
build tree for this interpreter (only its _core and wafersim targets are built).
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as cmake:
        return re.search(r"project\(wafersim VERSION ([0-9.]+)", cmake.read()).group(1)


class BuildWithCMake(build_py):
    def run(self):
        build = os.environ.get("WAFERSIM_BUILD_DIR", "")
        if not build:
            build = os.path.join(ROOT, "build-pip")
            subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython_EXECUTABLE={sys.executable}", "-DWAFERSIM_TESTS=OFF"], check=True)
        subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count() or 2), "--target", "_core", "wafersim"],
                       check=True)
        package = os.path.join(self.build_lib, "wafersim")
        shutil.copytree(os.path.join(build, "python", "wafersim"), package, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(os.path.join(build, "sim", "wafersim"), os.path.join(package, "wafersim"))


class CompiledDistribution(Distribution):
    """The wheel holds a compiled module: tagged for this interpreter and platform."""

    def has_ext_modules(self):
        return True


setup(
    version=version(),
    packages=["wafersim"],
    package_dir={"wafersim": "python/wafersim"},
    cmdclass={"build_py": BuildWithCMake},
    distclass=CompiledDistribution,
    options={"build": {"build_base": os.path.join("build-pip", "setuptools")},
             "egg_info": {"egg_base": "build-pip"}},
)
