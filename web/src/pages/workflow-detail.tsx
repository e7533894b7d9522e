export default function Page() { return <p>workflow-detail</p>; }
