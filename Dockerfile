# The hpa-lint image: the admission webhook (entrypoint) and the CLI.
# Build: docker build -t ghcr.io/hpa-lint/hpa-lint:0.1.0 .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p hpa-lint-webhook -p hpa-lint --bin hpa-webhook --bin hpa-lint \
    && install -D -m 0755 target/release/hpa-webhook target/release/hpa-lint -t /out/

# glibc and CA certificates, nothing else; runs as uid 65532 (the chart's runAsUser).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
EXPOSE 8443 9090
ENTRYPOINT ["/usr/local/bin/hpa-webhook"]
