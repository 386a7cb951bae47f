import Logging
import Synchronization
import NIOCore
import TetherCore

extension Device {
    /// Keeps a subscription's LAN connection up until cancelled: connect, log in, read the
    /// status, then heartbeats and reports until the link drops; then reconnect after a growing
    /// delay. While the cloud carries the subscription, a device gone from the LAN is waited for
    /// rather than dialled, and every loss of the LAN link is followed by a read through the
    /// cloud. The first outcome resolves `firstLogin`: a LAN login, or the cloud when the LAN
    /// fails; when neither path works the subscription ends.
    func runSession(firstLogin: AsyncPromise<Void, TetherError>, cloudAttachment: AsyncPromise<TetherError?, Never>) async {
        var generator = SystemRandomNumberGenerator()
        var attempt = 0
        while !Task.isCancelled {
            if waitsForLAN(firstLogin) {
                await settleOnCloud(firstLogin)
                do { try await Task.sleep(for: lan.discoveryInterval) } catch { break }
                continue
            }
            do throws(TetherError) {
                let connection = try await connectAndLogin()
                guard setConnection(connection, for: firstLogin) else {
                    await connection.close()
                    break
                }
                if let codec {
                    do throws(TetherError) {
                        _ = try await readStatus(codec: codec, on: connection)
                    } catch {
                        _ = setConnection(nil, for: firstLogin)
                        await connection.close()
                        throw error
                    }
                }
                attempt = 0
                await withDiscardingTaskGroup { group in
                    if !firstLogin.isResolved {
                        // Bound while the connection is served, so that heartbeats keep it alive
                        // if the cloud is slow; subscribe() returns once the binding is settled.
                        group.addTask {
                            await self.bindThroughCloudIfNeeded()
                            firstLogin.resolve(.success(()))
                        }
                    }
                    await serve(connection)
                }
                _ = setConnection(nil, for: firstLogin)
                logger.debug("device link lost, reconnecting", metadata: ["tether.device": "\(id)"])
                if cloudCarries(firstLogin) { await resyncThroughCloud() }
            } catch {
                // The first LAN failure waits for the cloud's answer: it decides whether the
                // subscription stands.
                let cloudError = firstLogin.isResolved ? nil : await cloudAttachment.result(ifCancelled: { .success(nil) }).get()
                if cloudCarries(firstLogin) {
                    await settleOnCloud(firstLogin)
                } else if !firstLogin.isResolved {
                    // Neither path: subscribe() fails and there is nothing to keep alive.
                    let lanUnknown = error.code == .deviceOffline
                    subscriptionFailed(firstLogin, lanUnknown ? cloudError ?? error : error)
                    return
                }
                logger.debug("device reconnection failed", metadata: ["tether.device": "\(id)", "tether.error": "\(error)"])
            }
            let delay = lan.reconnect.delay(attempt: attempt, using: &generator)
            attempt += 1
            do { try await Task.sleep(for: delay) } catch { break }
        }
        // Cancelled (unsubscribe, client shutdown) before the first login: subscribe() must not wait forever.
        firstLogin.resolve(.failure(TetherError(.cancelled, "the subscription to \(id) ended before it was established")))
        let connection = state.withLock { $0.session?.firstLogin === firstLogin ? $0.session?.connection : nil }
        await connection?.close()
    }

    /// Records the connection of the subscription `token` stands for; false when that
    /// subscription has ended (an unsubscribe, or a newer subscribe, came in between). The LAN
    /// path is up from the login on, so that the status read right after it already shows it
    /// (an app watching `controlPath` sees the move back to the LAN with that report).
    private func setConnection(_ connection: GizwitsLANClient?, for token: AsyncPromise<Void, TetherError>) -> Bool {
        var current = false
        updatePath { state in
            guard state.session?.firstLogin === token else { return [] }
            current = true
            state.session?.connection = connection
            return [.lanSession(up: connection != nil)]
        }
        return current
    }

    /// Runs a logged-in connection until it closes: delivers what the device sends and checks
    /// the link with heartbeats, closing it when one goes unanswered.
    private func serve(_ connection: GizwitsLANClient) async {
        // Each task answers whether its end is the connection's end: the grant's renewal may
        // finish (a passcode login has nothing to renew) while the connection goes on.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await message in connection.unsolicited { self.handle(message) }
                return true
            }
            group.addTask {
                await self.renewLANGrant(on: connection)
                return false
            }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: self.lan.heartbeatInterval) } catch { return true }
                    do throws(TetherError) {
                        _ = try await connection.request(.heartbeat, timeout: self.lan.heartbeatTimeout)
                    } catch {
                        self.logger.debug("heartbeat failed, closing the link", metadata: ["tether.device": "\(self.id)", "tether.error": "\(error)"])
                        await connection.close()
                        return true
                    }
                }
                return true
            }
            while let ends = await group.next(), !ends {}
            group.cancelAll()
        }
        await connection.close()
    }

    private func handle(_ message: GizwitsLANMessage) {
        let p0: ByteBuffer
        let sn: UInt32
        switch message {
        case .p0FromDevice(let payload): (p0, sn) = (payload, 0)
        case .p0WithAck(let number, let payload): (p0, sn) = (payload, number)
        default: return
        }
        guard let codec else {
            if let bytes = p0.getBytes(at: p0.readerIndex, length: p0.readableBytes), bytes.first == P0Action.transparentFromDevice.rawValue {
                emit(.binary(Array(bytes.dropFirst())))
            }
            return
        }
        do throws(TetherError) {
            switch try codec.decode(p0) {
            case .readAck(let status), .report(let status):
                record(DeviceStatusReport(status: status, sn: sn))
            case .transparentFromDevice(let bytes):
                emit(.binary(bytes))
            case .control, .read, .transparentToDevice:
                break
            }
        } catch {
            emit(.error(error))
        }
    }
}
