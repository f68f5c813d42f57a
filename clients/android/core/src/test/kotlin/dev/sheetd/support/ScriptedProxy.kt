package dev.sheetd.support

import java.io.ByteArrayOutputStream
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.Collections
import java.util.concurrent.ConcurrentLinkedQueue

/**
 * A local HTTP proxy in front of the live sheetd that answers from a script: each request takes the
 * next step ([Step.Answer] a status, [Step.Drop] the connection, [Step.ForwardThenCut] a stream after its
 * first decision); with the script empty it forwards. Every request is recorded (method, target,
 * headers, body). One request per connection (`Connection: close`).
 */
class ScriptedProxy(private val upstreamPort: Int) : AutoCloseable {
    sealed class Step {
        class Answer(val status: Int, val headers: Map<String, String> = emptyMap(), val body: String = "") : Step()
        object Drop : Step()
        object ForwardThenCut : Step()
        class Events(val text: String) : Step()
    }

    class Request(val method: String, val target: String, val headers: Map<String, String>, val body: String) {
        fun header(name: String) = headers[name.let(dev.sheetd.client.HttpCore.Companion::lower)]
    }

    private val server = ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))
    val port: Int get() = server.localPort
    val url: String get() = "http://127.0.0.1:$port"
    val script = ConcurrentLinkedQueue<Step>()
    val requests: MutableList<Request> = Collections.synchronizedList(ArrayList())
    private val thread = Thread {
        while (!server.isClosed) {
            val socket = try { server.accept() } catch (e: Exception) { break }
            Thread { handle(socket) }.apply { isDaemon = true }.start()
        }
    }.apply { isDaemon = true; start() }

    fun then(vararg steps: Step): ScriptedProxy { script.addAll(steps); return this }

    fun requestsTo(pathPrefix: String) = synchronized(requests) { requests.filter { it.target.startsWith(pathPrefix) } }

    override fun close() { server.close() }

    private fun handle(socket: Socket) {
        socket.use { s ->
            val input = s.getInputStream()
            val head = readHead(input) ?: return
            val lines = head.split("\r\n")
            val (method, target) = lines[0].split(" ").let { it[0] to it[1] }
            val headers = LinkedHashMap<String, String>()
            for (line in lines.drop(1)) {
                val colon = line.indexOf(':')
                if (colon > 0) headers[line.substring(0, colon).trim().let(dev.sheetd.client.HttpCore.Companion::lower)] = line.substring(colon + 1).trim()
            }
            val length = headers["content-length"]?.toInt() ?: 0
            val body = ByteArray(length)
            var read = 0
            while (read < length) {
                val n = input.read(body, read, length - read)
                if (n < 0) break
                read += n
            }
            val request = Request(method, target, headers, String(body, 0, read))
            requests.add(request)
            val out = s.getOutputStream()
            when (val step = script.poll()) {
                null -> forward(request, out, cut = false)
                is Step.Answer -> {
                    val bytes = step.body.toByteArray()
                    val extra = step.headers.entries.joinToString("") { "${it.key}: ${it.value}\r\n" }
                    val type = if (step.body.startsWith("{")) "Content-Type: application/problem+json\r\n" else ""
                    out.write("HTTP/1.1 ${step.status} Scripted\r\n${type}${extra}Content-Length: ${bytes.size}\r\nConnection: close\r\n\r\n".toByteArray())
                    out.write(bytes)
                    out.flush()
                }
                is Step.Drop -> Unit
                is Step.ForwardThenCut -> forward(request, out, cut = true)
                is Step.Events -> {
                    out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n${step.text}".toByteArray())
                    out.flush()
                }
            }
        }
    }

    /** Sends [request] to sheetd and copies the answer back; [cut]: close after the first decision event. */
    private fun forward(request: Request, out: OutputStream, cut: Boolean) {
        Socket("127.0.0.1", upstreamPort).use { upstream ->
            val head = StringBuilder("${request.method} ${request.target} HTTP/1.1\r\n")
            for ((name, value) in request.headers) if (name != "connection") head.append("$name: $value\r\n")
            head.append("Connection: close\r\n\r\n")
            val upOut = upstream.getOutputStream()
            upOut.write(head.toString().toByteArray())
            upOut.write(request.body.toByteArray())
            upOut.flush()
            val upIn = upstream.getInputStream()
            val responseHead = readHead(upIn) ?: return
            val kept = responseHead.split("\r\n").filter { !it.let(dev.sheetd.client.HttpCore.Companion::lower).startsWith("connection:") }
            out.write((kept.joinToString("\r\n") + "\r\nConnection: close\r\n\r\n").toByteArray())
            out.flush()
            val buffer = ByteArray(8192)
            val seen = StringBuilder()
            while (true) {
                val n = try { upIn.read(buffer) } catch (e: Exception) { -1 }
                if (n < 0) break
                out.write(buffer, 0, n)
                out.flush()
                if (cut) {
                    seen.append(String(buffer, 0, n))
                    val at = seen.indexOf("event: decision")
                    if (at >= 0 && seen.indexOf("\n\n", at) >= 0) return
                }
            }
        }
    }

    private fun readHead(input: InputStream): String? {
        val bytes = ByteArrayOutputStream()
        var last4 = 0
        while (true) {
            val b = input.read()
            if (b < 0) return null
            bytes.write(b)
            last4 = (last4 shl 8) or b
            if (last4 == 0x0D0A0D0A) return String(bytes.toByteArray()).removeSuffix("\r\n\r\n")
        }
    }
}
