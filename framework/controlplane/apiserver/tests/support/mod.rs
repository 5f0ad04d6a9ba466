//! Shared test setup: an in-process server and kube-rs clients for its identities.

#![allow(dead_code, unreachable_pub)]

use kube::{Client, Config};
use mni_apiserver::{Server, ServerBuilder};

/// A kube-rs client authenticating with `token`.
pub fn client_with_token(server: &Server, token: &str) -> Client {
    let mut config = Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).expect("client")
}

/// Starts a server and returns it with an admin client.
pub async fn start_with(builder: ServerBuilder) -> (Server, Client) {
    let server = builder.start().await.expect("server starts");
    let client = client_with_token(&server, server.admin_token());
    (server, client)
}

/// Starts an in-memory server on an ephemeral port with an admin client.
pub async fn start() -> (Server, Client) {
    start_with(Server::builder()).await
}

/// `curl` arguments that authenticate as the admin.
pub fn curl_auth(server: &Server) -> [String; 2] {
    [
        "-H".to_string(),
        format!("Authorization: Bearer {}", server.admin_token()),
    ]
}
