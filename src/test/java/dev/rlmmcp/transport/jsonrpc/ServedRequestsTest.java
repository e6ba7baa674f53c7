package dev.rlmmcp.transport.jsonrpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class ServedRequestsTest {

    private final ServedRequests served = new ServedRequests();

    @Test
    void aCancellationReachesTheContextOfTheRequestWithThatIdOnThatConnection() {
        AtomicInteger runs = new AtomicInteger();
        try (ServedRequests.Served request = served.serve("c1", 7);
                CallContext.Registration registration = request.context().onCancel(runs::incrementAndGet)) {
            assertThat(served.cancel("c2", 7))
                    .as("another connection's request 7")
                    .isFalse();
            assertThat(served.cancel("c1", 8)).as("another request").isFalse();
            assertThat(request.context().cancelled()).isFalse();
            assertThat(served.cancel("c1", 7L)).isTrue();
            assertThat(served.cancel("c1", 7.0))
                    .as("7.0 is the same JSON id as 7")
                    .isTrue();
            assertThat(runs).hasValue(1);
            assertThat(request.context().cancelled()).isTrue();
            assertThat(served.isCancelled("c1", 7)).isTrue();
            assertThat(served.isCancelled("c2", 7)).isFalse();
        }
        assertThat(served.cancel("c1", 7)).as("ended requests are forgotten").isFalse();
        assertThat(served.isCancelled("c1", 7)).isFalse();
    }

    @Test
    void stringIdsAreNotNumbersAndEveryRequestHasAContextOfItsOwn() {
        try (ServedRequests.Served a = served.serve("c1", "7");
                ServedRequests.Served b = served.serve("c1", 7)) {
            assertThat(a.context()).isNotSameAs(b.context()).isNotSameAs(CallContext.NONE);
            served.cancel("c1", "7");
            assertThat(a.context().cancelled()).isTrue();
            assertThat(b.context().cancelled()).isFalse();
        }
    }

    @Test
    void aRequestThatEndedDoesNotForgetANewerOneWithTheSameId() {
        ServedRequests.Served first = served.serve("c1", 1);
        try (ServedRequests.Served second = served.serve("c1", 1)) {
            first.close();
            assertThat(served.cancel("c1", 1)).isTrue();
            assertThat(second.context().cancelled()).isTrue();
        }
    }

    @Test
    void fractionalIdsStayDistinct() {
        assertThat(ServedRequests.normalized(7)).isEqualTo(7L);
        assertThat(ServedRequests.normalized(7.0)).isEqualTo(7L);
        assertThat(ServedRequests.normalized(7.5)).isEqualTo(7.5);
        assertThat(ServedRequests.normalized("7")).isEqualTo("7");
    }

    @Test
    void theContextTravelsInTheReactorContextWhereTheSdkReadsItsTransportContext() {
        try (ServedRequests.Served request = served.serve("c1", 3)) {
            Object seen = request.carrying(Mono.deferContextual(
                            ctx -> Mono.just(ctx.getOrDefault(McpTransportContext.KEY, McpTransportContext.EMPTY)
                                    .get(ToolCatalog.CALL_CONTEXT))))
                    .block();
            assertThat(seen).isSameAs(request.context());
        }
    }

    @Test
    void aCancellationIsTakenFromTheNotificationAndNotPassedOn() {
        try (ServedRequests.Served request = served.serve("c1", 5)) {
            assertThat(ClientCancellation.handled(
                            served,
                            "c1",
                            new McpSchema.JSONRPCNotification(
                                    "2.0", "notifications/cancelled", Map.of("requestId", 5, "reason", "user"))))
                    .isTrue();
            assertThat(request.context().cancelled()).isTrue();
            assertThat(ClientCancellation.handled(
                            served, "c1", new McpSchema.JSONRPCNotification("2.0", "notifications/progress", Map.of())))
                    .isFalse();
        }
    }
}
