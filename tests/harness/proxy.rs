//! A recording proxy for one cluster: a plain-HTTP endpoint on 127.0.0.1 that writes down the
//! method and target of every request it receives, then forwards the request to the real API
//! server through a kube-rs client (which holds the credentials) and streams the answer back,
//! watches included. Tests point flotilla at it to see exactly what flotilla sends. It must
//! not change a request beyond dropping hop-by-hop headers.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use http_body_util::BodyExt;
use kube::Client;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One request as flotilla sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub method: String,
    pub target: String,
}

pub struct RecordingProxy {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RecordingProxy {
    pub async fn start(upstream: Client) -> RecordingProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the recording proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, upstream.clone(), log.clone()));
            }
        });
        RecordingProxy {
            port,
            requests,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("request log").clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves one keep-alive connection: requests one after another until the client closes it.
async fn serve(stream: TcpStream, upstream: Client, log: Arc<Mutex<Vec<Recorded>>>) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            head.push(line.trim_end().to_string());
        }
        let Some(request_line) = head.first() else {
            return;
        };
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default().to_string();
        log.lock().expect("request log").push(Recorded {
            method: method.clone(),
            target: target.clone(),
        });
        let mut builder = http::Request::builder()
            .method(method.as_str())
            .uri(&target);
        let mut length = 0usize;
        for header in &head[1..] {
            let Some((name, value)) = header.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap_or(0),
                "host" | "connection" | "authorization" | "transfer-encoding" => {}
                _ => builder = builder.header(name, value),
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let request = builder
            .body(kube::client::Body::from(body))
            .expect("request");
        let response = match upstream.send(request).await {
            Ok(response) => response,
            Err(err) => {
                let text = format!("proxy: upstream failed: {err}");
                let answer = format!(
                    "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{text}",
                    text.len()
                );
                if writer.write_all(answer.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let (parts, body) = response.into_parts();
        let mut answer = format!(
            "HTTP/1.1 {} {}\r\n",
            parts.status.as_u16(),
            parts.status.canonical_reason().unwrap_or("")
        );
        for (name, value) in &parts.headers {
            let skip = matches!(
                name.as_str(),
                "content-length" | "transfer-encoding" | "connection"
            );
            if !skip && let Ok(value) = value.to_str() {
                answer.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        answer.push_str("transfer-encoding: chunked\r\n\r\n");
        if writer.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
        let mut chunks = body.into_data_stream();
        while let Some(chunk) = chunks.next().await {
            let Ok(chunk) = chunk else {
                return;
            };
            if chunk.is_empty() {
                continue;
            }
            let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
            frame.extend_from_slice(&chunk);
            frame.extend_from_slice(b"\r\n");
            if writer.write_all(&frame).await.is_err() {
                return;
            }
        }
        if writer.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}
