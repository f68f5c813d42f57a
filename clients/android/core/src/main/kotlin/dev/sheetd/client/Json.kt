package dev.sheetd.client

// A small JSON reader and writer (RFC 8259), so the library needs no JSON dependency and decodes
// leniently by hand: unknown members are ignored, unknown enumeration values kept.

/** A parsed JSON value: `Map<String, Any?>`, `List<Any?>`, `String`, `Double`/`Long`, `Boolean` or null. */
internal object Json {
    fun parse(text: String): Any? {
        val reader = Reader(text)
        reader.skipSpace()
        val value = reader.value()
        reader.skipSpace()
        if (!reader.atEnd()) throw reader.fail("trailing characters")
        return value
    }

    fun write(value: Any?): String = StringBuilder().also { append(it, value) }.toString()

    fun append(out: StringBuilder, value: Any?) {
        when (value) {
            null -> out.append("null")
            is String -> string(out, value)
            is Boolean -> out.append(if (value) "true" else "false")
            is Int, is Long -> out.append(value.toString())
            is Double -> out.append(number(value))
            is Float -> out.append(number(value.toDouble()))
            is Map<*, *> -> {
                out.append('{')
                var first = true
                for ((key, member) in value) {
                    if (!first) out.append(',')
                    first = false
                    string(out, key.toString())
                    out.append(':')
                    append(out, member)
                }
                out.append('}')
            }
            is List<*> -> {
                out.append('[')
                value.forEachIndexed { index, element ->
                    if (index > 0) out.append(',')
                    append(out, element)
                }
                out.append(']')
            }
            else -> throw IllegalArgumentException("not a JSON value: ${value.javaClass.name}")
        }
    }

    /** Integral values without a fraction (`320`), others as Kotlin prints them (`412.5`). */
    fun number(value: Double): String {
        require(!value.isNaN() && !value.isInfinite()) { "JSON has no NaN or infinity" }
        return if (value == Math.rint(value) && Math.abs(value) < 1e15) value.toLong().toString() else value.toString()
    }

    private fun string(out: StringBuilder, text: String) {
        out.append('"')
        for (c in text) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                else -> if (c < ' ') out.append(String.format("\\u%04x", c - '\u0000')) else out.append(c)
            }
        }
        out.append('"')
    }

    private class Reader(val text: String) {
        var index = 0

        fun atEnd() = index >= text.length
        fun fail(what: String) = IllegalArgumentException("invalid JSON at offset $index: $what")

        fun skipSpace() {
            while (index < text.length && (text[index] == ' ' || text[index] == '\n' || text[index] == '\r' || text[index] == '\t')) index++
        }

        fun value(): Any? {
            if (atEnd()) throw fail("unexpected end")
            return when (text[index]) {
                '{' -> obj()
                '[' -> array()
                '"' -> string()
                't' -> literal("true", true)
                'f' -> literal("false", false)
                'n' -> literal("null", null)
                else -> number()
            }
        }

        private fun literal(word: String, value: Any?): Any? {
            if (!text.startsWith(word, index)) throw fail("expected $word")
            index += word.length
            return value
        }

        private fun obj(): Map<String, Any?> {
            val map = LinkedHashMap<String, Any?>()
            index++
            skipSpace()
            if (!atEnd() && text[index] == '}') { index++; return map }
            while (true) {
                skipSpace()
                if (atEnd() || text[index] != '"') throw fail("expected a member name")
                val key = string()
                skipSpace()
                if (atEnd() || text[index] != ':') throw fail("expected ':'")
                index++
                skipSpace()
                map[key] = value()
                skipSpace()
                if (atEnd()) throw fail("unexpected end")
                val c = text[index++]
                if (c == '}') return map
                if (c != ',') { index--; throw fail("expected ',' or '}'") }
            }
        }

        private fun array(): List<Any?> {
            val list = ArrayList<Any?>()
            index++
            skipSpace()
            if (!atEnd() && text[index] == ']') { index++; return list }
            while (true) {
                skipSpace()
                list.add(value())
                skipSpace()
                if (atEnd()) throw fail("unexpected end")
                val c = text[index++]
                if (c == ']') return list
                if (c != ',') { index--; throw fail("expected ',' or ']'") }
            }
        }

        private fun string(): String {
            val out = StringBuilder()
            index++
            while (true) {
                if (atEnd()) throw fail("unterminated string")
                val c = text[index++]
                when {
                    c == '"' -> return out.toString()
                    c == '\\' -> {
                        if (atEnd()) throw fail("unterminated escape")
                        when (val e = text[index++]) {
                            '"', '\\', '/' -> out.append(e)
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000C')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                if (index + 4 > text.length) throw fail("short \\u escape")
                                val code = text.substring(index, index + 4).toIntOrNull(16) ?: throw fail("bad \\u escape")
                                out.append(code.toChar())
                                index += 4
                            }
                            else -> throw fail("bad escape \\$e")
                        }
                    }
                    c < ' ' -> throw fail("control character in string")
                    else -> out.append(c)
                }
            }
        }

        private fun number(): Any {
            val start = index
            if (text[index] == '-') index++
            while (index < text.length && (text[index] in '0'..'9' || text[index] == '.' || text[index] == 'e' || text[index] == 'E' || text[index] == '+' || text[index] == '-')) index++
            val token = text.substring(start, index)
            if (token.length == 0 || token == "-") throw fail("unexpected character")
            val integral = token.all { it == '-' || it in '0'..'9' }
            if (integral) token.toLongOrNull()?.let { return it }
            return token.toDoubleOrNull() ?: throw fail("bad number $token")
        }
    }
}

/** Typed reads of a decoded JSON object; a missing or mistyped required member throws [SheetdException]. */
internal class JsonObject(val members: Map<String, Any?>, private val where: String) {
    fun has(name: String) = members[name] != null
    fun string(name: String): String = members[name] as? String ?: missing(name, "a string")
    fun stringOrNull(name: String): String? = members[name] as? String
    fun bool(name: String): Boolean = members[name] as? Boolean ?: missing(name, "a boolean")
    fun boolOr(name: String, fallback: Boolean): Boolean = members[name] as? Boolean ?: fallback
    fun double(name: String): Double = (members[name] as? Number)?.toDouble() ?: missing(name, "a number")
    fun doubleOrNull(name: String): Double? = (members[name] as? Number)?.toDouble()
    fun int(name: String): Int = (members[name] as? Number)?.toInt() ?: missing(name, "a number")
    fun intOrNull(name: String): Int? = (members[name] as? Number)?.toInt()
    fun obj(name: String): JsonObject = objOrNull(name) ?: missing(name, "an object")
    fun objOrNull(name: String): JsonObject? = (members[name] as? Map<*, *>)?.let { JsonObject(cast(it), "$where.$name") }
    fun strings(name: String): List<String> = (members[name] as? List<*>)?.filterIsInstance<String>() ?: emptyList()
    fun objects(name: String): List<JsonObject> =
        (members[name] as? List<*>)?.mapIndexed { i, element ->
            JsonObject(cast(element as? Map<*, *> ?: missing("$name[$i]", "an object")), "$where.$name[$i]")
        } ?: emptyList()

    private fun missing(name: String, what: String): Nothing =
        throw SheetdException(SheetdException.Kind.INVALID_RESPONSE, message = "$where.$name is not $what")

    companion object {
        @Suppress("UNCHECKED_CAST")
        fun cast(map: Map<*, *>): Map<String, Any?> = map as Map<String, Any?>

        fun parse(text: String, where: String): JsonObject {
            val value = try {
                Json.parse(text)
            } catch (e: IllegalArgumentException) {
                throw SheetdException(SheetdException.Kind.INVALID_RESPONSE, message = "the $where could not be read: ${e.message}")
            }
            val map = value as? Map<*, *>
                ?: throw SheetdException(SheetdException.Kind.INVALID_RESPONSE, message = "the $where is not a JSON object")
            return JsonObject(cast(map), where)
        }
    }
}
