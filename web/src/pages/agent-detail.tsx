export default function Page() { return <p>agent-detail</p>; }
