package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What follows an initialize waits until the SDK's session has answered it: with the front's early answer
 * ({@link StdioFront}) a client sends its next messages long before the session took its capabilities.
 */
class HandshakeTest {

    private static final McpSchema.JSONRPCRequest INITIALIZE =
            new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, McpSchema.METHOD_INITIALIZE, 1, Map.of());
    private static final McpSchema.JSONRPCNotification INITIALIZED = new McpSchema.JSONRPCNotification(
            McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null);
    private static final McpSchema.JSONRPCRequest CALL =
            new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, McpSchema.METHOD_TOOLS_CALL, 2, Map.of());

    @Test
    void theMessagesBehindAnInitializeWaitForTheSessionsAnswerToIt() throws Exception {
        Handshake handshake = new Handshake();
        handshake.parsed(0, INITIALIZE);
        handshake.parsed(1, INITIALIZED);
        handshake.parsed(2, CALL);
        assertThat(handshake.admit(0, INITIALIZE)).isEqualTo(Handshake.Admission.PASS);
        CompletableFuture<Handshake.Admission> notification =
                CompletableFuture.supplyAsync(() -> handshake.admit(1, INITIALIZED));
        CompletableFuture<Handshake.Admission> call = CompletableFuture.supplyAsync(() -> handshake.admit(2, CALL));
        Thread.sleep(300);
        assertThat(notification).as("before the session answered initialize").isNotDone();
        assertThat(call).isNotDone();

        handshake.sent(new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, 1, Map.of(), null));
        assertThat(notification.get(5, TimeUnit.SECONDS)).isEqualTo(Handshake.Admission.PASS);
        assertThat(call.get(5, TimeUnit.SECONDS)).isIn(Handshake.Admission.PASS, Handshake.Admission.INITIALIZED_FIRST);
    }

    @Test
    void aPingBeforeAnyInitializeWaitsForNothing() {
        Handshake handshake = new Handshake();
        McpSchema.JSONRPCRequest ping =
                new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, McpSchema.METHOD_PING, 1, null);
        handshake.parsed(0, ping);
        handshake.parsed(1, INITIALIZE);
        long t0 = System.nanoTime();
        assertThat(handshake.admit(0, ping)).isEqualTo(Handshake.Admission.PONG);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(1));
    }
}
