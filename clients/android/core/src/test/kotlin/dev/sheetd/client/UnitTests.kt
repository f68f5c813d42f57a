package dev.sheetd.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The pure parts of the core: JSON, models, retry rules, SSE parsing, the LRU, the context. */
class UnitTests {
    @Test
    fun jsonRoundTripsEscapesAndNumbers() {
        val text = """{"a":"x\"y\\z\n\u00e9\u0001","n":[1,2.5,-3e2,true,false,null],"o":{}}"""
        val value = Json.parse(text) as Map<*, *>
        assertEquals("x\"y\\z\né\u0001", value["a"])
        assertEquals(listOf(1L, 2.5, -300.0, true, false, null), value["n"])
        assertEquals("""{"a":"x\"y\\z\né\u0001","n":[1,2.5,-300,true,false,null],"o":{}}""", Json.write(value))
        assertEquals("320", Json.number(320.0))
        assertEquals("412.5", Json.number(412.5))
    }

    @Test
    fun jsonRefusesMalformedText() {
        for (bad in listOf("{", "{\"a\":}", "[1,]", "{\"a\":1}x", "\"\\q\"", "tru", "{'a':1}")) {
            assertThrows(IllegalArgumentException::class.java, { Json.parse(bad) }, bad)
        }
    }

    @Test
    fun unknownEnumerationValuesAndMembersAreKept() {
        val decision = Decision.fromJson(
            """{"present":true,"reason":"quiet-hours","futureMember":{"x":1},"stack":[{"id":"s","kind":"carousel","variant":"content",
            "detents":[{"id":"content","height":240}],"selectedDetent":"content","grabberVisible":true,"swipeToDismiss":true,
            "tapScrimToDismiss":true,"largestUndimmedDetent":null,"dismissAffordance":"chevron","confirmBeforeDismiss":false,
            "expandsOnScrollToEdge":false,"parentScalesBehind":false,"awaitingContentHeight":false,"scrollable":false,
            "scrimAccessibleAsClose":true,"header":null,"primaryButton":null,"presentationStyle":"sheet","transition":null,
            "keyboardAdjustment":"none","experiment":null,"newBlock":[],"android":{"skipPartiallyExpanded":true,
            "initialValue":"Expanded","dragHandle":true,"sheetGesturesEnabled":true,"shouldDismissOnClickOutside":true,
            "shouldDismissOnBackPress":true,"confirmValueChangeRequiresDialog":false,"confirmValueChange":{"hidden":"undo"},
            "scrim":{"dimmedAt":["Expanded"]},"shape":{"topCornerRadius":16},"properties":{"shouldDismissOnBackPress":true,
            "shouldDismissOnClickOutside":true},"imePadding":false,"edgeToEdge":true}}],"yielded":[],"held":[],"trace":[]}"""
        )
        assertEquals("quiet-hours", decision.reason.rawValue)
        assertFalse(decision.reason.isKnown)
        val sheet = decision.sheet!!
        assertFalse(sheet.kind.isKnown)
        assertEquals(SheetKind("carousel"), sheet.kind)
        assertEquals(DismissAffordance("chevron"), sheet.dismissAffordance)
        assertEquals(HiddenChange("undo"), sheet.android!!.hidden)
        assertTrue(DecisionReason.LATCHED.isKnown)
        assertEquals(240.0, sheet.detents.single().height)
        assertEquals(16.0, sheet.android!!.topCornerRadius)
    }

    @Test
    fun aDecisionWithoutItsRequiredMembersIsAnInvalidResponse() {
        val error = assertThrows(SheetdException::class.java) { Decision.fromJson("""{"present":true,"stack":[]}""") }
        assertEquals(SheetdException.Kind.INVALID_RESPONSE, error.kind)
        assertTrue(error.message!!.contains("reason"), error.message)
    }

    @Test
    fun backoffDoublesIsCappedJitteredAndHonoursRetryAfterUpToItsCap() {
        val policy = RetryPolicy(baseDelay = 0.2, maxDelay = 1.0, maxRetryAfter = 10.0)
        assertEquals(0.1, policy.delay(1, unit = 0.0), 1e-9)
        assertEquals(0.2, policy.delay(1, unit = 1.0), 1e-9)
        assertEquals(0.4, policy.delay(3, unit = 0.0), 1e-9)
        assertEquals(1.0, policy.delay(9, unit = 1.0), 1e-9)
        assertEquals(3.0, policy.delay(1, retryAfter = 3.0, unit = 0.5), 1e-9)
        assertEquals(10.0, policy.delay(1, retryAfter = 3600.0, unit = 0.5), 1e-9)
    }

    @Test
    fun retriedFailuresAreTransportAnd408429And5xxButNotOther4xxOrCertificates() {
        val policy = RetryPolicy()
        for (status in listOf(408, 429, 500, 502, 503, 504)) assertTrue(policy.retries(SheetdException(SheetdException.Kind.SERVER, status, message = "")), "$status")
        for (status in listOf(400, 401, 403, 404, 409, 422, 501)) assertFalse(policy.retries(SheetdException(SheetdException.Kind.SERVER, status, message = "")), "$status")
        assertTrue(policy.retries(SheetdException(SheetdException.Kind.TRANSPORT, message = "", cause = java.net.ConnectException())))
        assertTrue(policy.retries(SheetdException(SheetdException.Kind.TRANSPORT, message = "", cause = java.net.SocketTimeoutException())))
        assertFalse(policy.retries(SheetdException(SheetdException.Kind.TRANSPORT, message = "", cause = javax.net.ssl.SSLPeerUnverifiedException("untrusted"))))
        assertFalse(policy.retries(SheetdException(SheetdException.Kind.TOKEN, message = "")))
    }

    @Test
    fun retryAfterReadsSecondsAndAllThreeHttpDateForms() {
        val now = 784111777000L // Sun, 06 Nov 1994 08:49:37 GMT
        assertEquals(120.0, RetryAfter.seconds(" 120 "))
        assertEquals(3.0, RetryAfter.seconds("Sun, 06 Nov 1994 08:49:40 GMT", now))
        assertEquals(3.0, RetryAfter.seconds("Sunday, 06-Nov-94 08:49:40 GMT", now))
        assertEquals(3.0, RetryAfter.seconds("Sun Nov  6 08:49:40 1994", now))
        assertEquals(0.0, RetryAfter.seconds("Sun, 06 Nov 1994 08:49:00 GMT", now))
        assertNull(RetryAfter.seconds("soon", now))
        assertNull(RetryAfter.seconds("-5", now))
        assertEquals("Sun, 06 Nov 1994 08:49:37 GMT", RetryAfter.httpDate(now))
    }

    @Test
    fun serverSentEventsAreParsedAcrossChunksAndLineEndings() {
        val parser = ServerSentEventParser()
        val text = ": heartbeat\r\nretry: 1500\r\nid: \"e1\"\r\nevent: decision\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent: shutdown\rdata: {}\r\rdata: plain\n\n"
        val events = ArrayList<ServerSentEvent>()
        val bytes = text.toByteArray()
        for (i in bytes.indices) events.addAll(parser.feed(byteArrayOf(bytes[i]))) // one byte at a time
        assertEquals(
            listOf(
                ServerSentEvent("decision", "{\"a\":\n1}", "\"e1\""),
                ServerSentEvent("shutdown", "{}", "\"e1\""),
                ServerSentEvent("message", "plain", "\"e1\"")
            ),
            events
        )
        assertEquals(1500L, parser.retryMillis)
    }

    @Test
    fun theLruDropsTheLeastRecentlyUsedContext() {
        val cache = LruCache<SheetContext, String>(2)
        val a = SheetContext("a")
        val b = SheetContext("b")
        cache.put(a, "1")
        cache.put(b, "2")
        cache.get(a) // a is now the most recently used
        cache.put(SheetContext("c"), "3")
        assertEquals(listOf(a, SheetContext("c")), cache.keys())
        assertNull(cache.get(b))
        val none = LruCache<SheetContext, String>(0)
        none.put(a, "1")
        assertEquals(0, none.size)
    }

    @Test
    fun contextQueryCarriesEveryParameterInTheApisOrder() {
        val context = SheetContext(
            "home", "accounts", Platform.ANDROID, Idiom.PAD, Orientation.LANDSCAPE, true, false, 731.5, "2.10.0", "de-CH"
        )
        assertEquals(
            listOf("screen" to "home", "tab" to "accounts", "platform" to "android", "idiom" to "pad", "orientation" to "landscape",
                "keyboard" to "true", "dirty" to "false", "viewportHeight" to "731.5", "appVersion" to "2.10.0", "locale" to "de-CH"),
            context.queryItems()
        )
        assertEquals(listOf("screen" to "home", "platform" to "android"), SheetContext("home").queryItems())
    }

    @Test
    fun appVersionAndLocaleAreCheckedAsTheServerChecksThem() {
        assertEquals("2.10.0", SheetContext.appVersion("2.10.0"))
        assertNull(SheetContext.appVersion("2.10.0-beta"))
        assertNull(SheetContext.appVersion("1.2.3.4.5.6.7.8.9"))
        assertNull(SheetContext.appVersion("1234567890"))
        assertEquals("de-CH", SheetContext.locale("de_CH"))
        assertEquals("de-CH", SheetContext.locale(java.util.Locale("de", "CH")))
        assertNull(SheetContext.locale("d"))
        assertNull(SheetContext.locale("de-CH-toolongsubtag"))
    }

    @Test
    fun eventBodiesCarryTheirIdAndOccurredAtOnlyWhenAskedTo() {
        val event = SheetdEvent.Dismissal("home-offers", DismissalMethod.SWIPE, "id-1", 1_765_000_000_250L)
        assertEquals("""{"sheetId":"home-offers","method":"swipe","eventId":"id-1"}""", event.body(false))
        assertEquals("""{"sheetId":"home-offers","method":"swipe","eventId":"id-1","occurredAt":"2025-12-06T05:46:40.250Z"}""", event.body(true))
        val count = SheetdEvent.Count("offers-home", 3, seq = 7, filter = "category:security")
        assertEquals(count, SheetdEvent.fromStored(JsonObject(count.stored(), "t")))
        assertTrue(SheetdEvent.newEventId() != SheetdEvent.newEventId())
    }
}
