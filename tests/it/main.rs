mod cli;
mod demo_client;
mod golden;
mod peers;
mod scenarios;
mod sdk_python;
