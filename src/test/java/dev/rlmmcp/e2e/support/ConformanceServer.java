package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cli.Main;

/**
 * rlm-mcp's own command line with {@link ConformanceFixtures} served next to the real tools: what the
 * conformance suite runs against. Test code only, never in the jar; {@link ServerProcess#httpWithFixtures}
 * starts it as {@code java -cp target/rlm-mcp.jar:target/test-classes dev.rlmmcp.e2e.ConformanceServer serve ...}.
 */
public final class ConformanceServer {

    private ConformanceServer() {}

    public static void main(String[] args) {
        System.exit(Main.run(new ConformanceFixtures(new ObjectMapper()).features(), args));
    }
}
