# perfmine's base image for hosts that reach Docker Hub and PyPI: Debian bookworm's Python 3.11
# and C/C++ toolchain, git, and asv + pytest from PyPI (what every environment starts from).
#
#   docker build -f scripts/base-pypi.Dockerfile -t perfmine/base:bookworm-asv scripts/
#   perfmine --base-image perfmine/base:bookworm-asv ...      (or docker.baseImage in the config)
#
# Air-gapped hosts: build perfmine/base:bookworm with scripts/build-base-image.sh instead, and set
# synthesize.asv.wheelhouse to a directory holding asv's wheels (`pip download asv -d DIR` on a
# host with PyPI): perfmine then installs asv with `pip install --no-index --find-links DIR`.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates git python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel \
      gcc g++ make libc6-dev \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python3 -m pip install --no-cache-dir "asv>=0.6.4" "pytest>=7.2" \
 && asv --version && python3 -m pytest --version
LABEL org.perfmine.base=bookworm-pypi
WORKDIR /
CMD ["/bin/bash"]
