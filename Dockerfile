# hart on Debian 12: builds the .deb packages from this tree, then serves a model with them.
#   docker build -t hart .
#   docker run -p 8080:8080 -v /path/to/models:/models hart -m /models/model.gguf
# The build stage runs no tests (CI does): it needs no test data.
FROM debian:12 AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config dpkg-dev file \
      libpcre2-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libfmt-dev libicu-dev zlib1g-dev libstb-dev \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHART_BUILD_TESTS=OFF -DHART_BUILD_BENCH=OFF \
    && cmake --build /build \
    && cd /build && cpack -G DEB -B /debs

FROM debian:12-slim
COPY --from=build /debs/*.deb /tmp/debs/
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/debs/hart_*.deb \
    && rm -rf /var/lib/apt/lists/* /tmp/debs
EXPOSE 8080
# Listens on every interface of the container; -m names the model (mount it under /models).
ENTRYPOINT ["hart", "serve", "--host", "0.0.0.0", "--port", "8080"]
CMD ["-m", "/models/model.gguf"]
