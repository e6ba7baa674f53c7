package dev.rlmmcp.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What every transport gets from the router, checked once here rather than per transport. */
class InboundRouterTest {

    private static final McpJsonMapper MAPPER = new JacksonMcpJsonMapper(new ObjectMapper());

    private final InboundRouter router = new InboundRouter(MAPPER, ToolOffer.all());
    private final List<McpSchema.JSONRPCMessage> accepted = new ArrayList<>();

    private static McpSchema.JSONRPCMessage cancel(Object id) {
        return new McpSchema.JSONRPCNotification(
                McpSchema.JSONRPC_VERSION, "notifications/cancelled", Map.of("requestId", id));
    }

    private static McpSchema.JSONRPCRequest call(Object id) {
        return new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, "tools/call", id, Map.of("name", "t"));
    }

    private InboundRouter.Session session(AtomicReference<ServedRequests.Served> seen, Runnable during) {
        return new InboundRouter.Session() {
            @Override
            public void call(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
                seen.set(served);
                during.run();
            }

            @Override
            public void accept(McpSchema.JSONRPCMessage message) {
                accepted.add(message);
            }
        };
    }

    private void cancelOn(String connection, Object id) {
        try {
            router.dispatch(connection, cancel(id), session(new AtomicReference<>(), () -> {}));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void theAnswerToACancelledRequestIsWithheldWhatItSaysBeforeItIsNot() throws Exception {
        AtomicReference<ServedRequests.Served> seen = new AtomicReference<>();
        McpSchema.JSONRPCResponse answer = McpSchema.JSONRPCResponse.result(7, Map.of());
        McpSchema.JSONRPCNotification progress =
                new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, "notifications/progress", Map.of());
        List<Boolean> withheld = new ArrayList<>();
        router.dispatch("c1", call(7), session(seen, () -> {
            withheld.add(router.withheld("c1", answer));
            cancelOn("c1", 7);
            withheld.add(router.withheld("c1", answer));
            withheld.add(router.withheld("c1", progress));
            withheld.add(router.withheld("c2", answer));
            withheld.add(seen.get().withholds(answer));
        }));
        assertThat(withheld).containsExactly(false, true, false, false, true);
        assertThat(accepted)
                .as("a cancellation is the router's, not the SDK session's")
                .isEmpty();
        assertThat(router.withheld("c1", answer))
                .as("an ended request is forgotten")
                .isFalse();
    }

    @Test
    void aRequestServedOnAnotherThreadIsCancellableFromTheMomentItIsDispatched() throws Exception {
        List<Runnable> queued = new ArrayList<>();
        AtomicReference<ServedRequests.Served> seen = new AtomicReference<>();
        router.dispatch("c1", call("a"), session(seen, () -> {}), queued::add);
        cancelOn("c1", "a");
        queued.forEach(Runnable::run);
        assertThat(seen.get().context().cancelled()).isTrue();
    }

    @Test
    void notificationsAndResponsesGoToTheSession() throws Exception {
        McpSchema.JSONRPCMessage initialized = new McpSchema.JSONRPCNotification(
                McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null);
        McpSchema.JSONRPCMessage reply = McpSchema.JSONRPCResponse.result(3, Map.of());
        router.dispatch("c1", initialized, session(new AtomicReference<>(), () -> {}));
        router.dispatch("c1", reply, session(new AtomicReference<>(), () -> {}));
        assertThat(accepted).containsExactly(initialized, reply);
        assertThat(router.isStateless("2026-07-28", call(1)))
                .as("a router without the stateless revision")
                .isFalse();
    }
}
